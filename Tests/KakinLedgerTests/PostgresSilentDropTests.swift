import Foundation
import KakinTestSupport
import NIOCore
import NIOPosix
import Synchronization
import Testing

@testable import KakinLedger

/// The PostgreSQL engine while the database's packets are silently dropped (no reset, no answer:
/// a cable pulled, a firewall rule): every read and write ends in bounded time, and the ledger
/// works again once packets flow.
@Suite(.enabled(if: PostgresTestDatabase.url != nil, "\(PostgresTestDatabase.skipMessage)"))
struct PostgresSilentDropTests {
    /// The connection wait of the ledger under test.
    static let wait: Duration = .seconds(1)
    /// What every operation is answered within: the connection wait and a second (the engine's
    /// bound), and a second for the scheduling of a machine busy with other tests.
    static let bound: Duration = wait + .seconds(1) + .seconds(1)
    /// How long the packets are dropped: a few times the wait, and longer than ``bound``, so that an
    /// operation that waits for the packets to flow again cannot pass.
    static let blackout: Duration = wait * 5
    /// How long the ledger may take to work again once packets flow (connections stuck in their
    /// start-up are given up by PostgresNIO's connect timeout).
    static let recovery: Duration = .seconds(30)

    /// One operation of the load: what it was, when it started and ended, and how.
    struct Outcome: Sendable {
        enum Kind: String, Sendable, CaseIterable { case write, read, lookup }
        let kind: Kind
        let started: ContinuousClock.Instant
        let ended: ContinuousClock.Instant
        /// `nil` when it succeeded.
        let error: String?
        let unavailable: Bool
    }

    @Test("while PostgreSQL's packets are dropped, every read and write ends within the connection wait and a second")
    func silentDrops() async throws {
        try await PostgresTestDatabase.withSchema { schema in
            let direct = try PostgresTestDatabase.options(schema: schema)
            try await withMigratedStore(PostgresLedger(options: direct)) { _ in }
            let proxy = try await SilentDropProxy(to: direct.host, port: direct.port)
            var options = direct
            (options.host, options.port, options.connectionWait) = ("127.0.0.1", proxy.port, Self.wait)
            let store = try PostgresLedger(options: options)
            let load = Load()
            do {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for worker in 0..<9 {
                        group.addTask { await load.run(store, worker: worker) }
                    }
                    // Steady load first: every worker has been answered.
                    try await Self.until("the load runs", within: Self.recovery) {
                        Set(load.outcomes.withLock { $0.filter { $0.error == nil } }.map(\.kind)).count == 3
                    }
                    proxy.forward(false)
                    let dropped = ContinuousClock.now
                    try await Task.sleep(for: Self.blackout)
                    proxy.forward(true)
                    let resumed = ContinuousClock.now
                    try await Self.until("the ledger answers again", within: Self.recovery) {
                        let after = load.outcomes.withLock { $0.filter { $0.started >= resumed && $0.error == nil } }
                        return Set(after.map(\.kind)).count == 3
                    }
                    load.stop.store(true, ordering: .relaxed)
                    try await group.waitForAll()

                    let all = load.outcomes.withLock { $0 }
                    let during = all.filter { $0.ended > dropped && $0.started < resumed }
                    #expect(all.allSatisfy { $0.error == nil || $0.unavailable }, "\(all.compactMap(\.error).prefix(3))")
                    let slowest = all.max { $0.ended - $0.started < $1.ended - $1.started }
                    #expect(
                        all.allSatisfy { $0.ended - $0.started <= Self.bound },
                        "slowest: \(slowest.map { "\($0.kind) \($0.ended - $0.started): \($0.error ?? "answered")" } ?? "")")
                    // The drops were felt by every kind of operation, and writes were queued behind
                    // a writer that got no answer.
                    for kind in Outcome.Kind.allCases {
                        #expect(during.contains { $0.kind == kind && $0.unavailable }, "no \(kind) failed while packets were dropped")
                    }
                    #expect(during.filter { $0.kind == .write }.count >= 2)
                }
                let transaction = Fixture.transaction("after-drops", user: "alice")
                #expect(try await store.record(transaction, grants: Fixture.coins) == .recorded)
                #expect(try await store.transaction(id: "after-drops")?.transactionID == "after-drops")
            } catch {
                proxy.forward(true)
                try? await store.shutdown()
                try? await proxy.close()
                throw error
            }
            try await store.shutdown()
            try await proxy.close()
        }
    }

    /// The load's workers: what they did, and whether to stop.
    final class Load: Sendable {
        let outcomes = Mutex<[Outcome]>([])
        let stop = Atomic<Bool>(false)

        /// Writes, reads and lookups by digest, one after the other, until ``stop``.
        func run(_ store: PostgresLedger, worker: Int) async {
            var count = 0
            while !stop.load(ordering: .relaxed) {
                count += 1
                let kind = Outcome.Kind.allCases[(count + worker) % 3]
                let id = "w\(worker)-\(count)", earlier = "w\(worker)-\(max(1, count - 1))"
                let started = ContinuousClock.now
                var error: (any Error)?
                do {
                    switch kind {
                    case .write: _ = try await store.record(Fixture.transaction(id, user: "user-\(worker)"), grants: Fixture.coins)
                    case .read: _ = try await store.transaction(id: earlier)
                    case .lookup: _ = try await store.signedTransactionAndSummary(digest: SignedDigest("jws.\(earlier)"))
                    }
                } catch let failure { error = failure }
                let outcome = Outcome(
                    kind: kind, started: started, ended: .now, error: error.map { String(describing: $0) },
                    unavailable: (error as? LedgerStoreError)?.code == .unavailable)
                outcomes.withLock { $0.append(outcome) }
            }
        }
    }

    /// Returns once `condition` holds, checking every few milliseconds; fails after `limit`.
    private static func until(
        _ what: String, within limit: Duration, _ condition: () -> Bool
    ) async throws {
        let end = ContinuousClock.now + limit
        while !condition() {
            guard ContinuousClock.now < end else {
                Issue.record("\(what): not within \(limit)")
                throw CancellationError()
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }
}

/// A TCP proxy on 127.0.0.1 (a port of its own) to a server: it forwards bytes both ways, and
/// while ``forward(_:)`` is off drops them both ways, keeping every connection open, as a network
/// that silently loses packets does.
final class SilentDropProxy: Sendable {
    private let server: any Channel
    /// The port it listens on.
    let port: Int

    init(to host: String, port target: Int) async throws {
        let flag = Forwarding()
        let group = MultiThreadedEventLoopGroup.singleton
        server = try await ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { inbound in
                ClientBootstrap(group: inbound.eventLoop).connect(host: host, port: target).flatMap { outbound in
                    outbound.pipeline.addHandler(Relay(to: inbound, forwarding: flag)).flatMap {
                        inbound.pipeline.addHandler(Relay(to: outbound, forwarding: flag))
                    }
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        port = server.localAddress?.port ?? 0
        self.flag = flag
    }

    private let flag: Forwarding

    /// Lets bytes through, or drops them both ways.
    func forward(_ on: Bool) {
        flag.on.store(on, ordering: .relaxed)
    }

    /// Stops listening; the connections end when the client closes them.
    func close() async throws {
        try await server.close()
    }

    /// The switch the relays read.
    fileprivate final class Forwarding: Sendable {
        let on = Atomic<Bool>(true)
    }

    /// Writes what one side reads to the other, while forwarding is on.
    private final class Relay: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        let peer: any Channel
        let forwarding: Forwarding

        init(to peer: any Channel, forwarding: Forwarding) {
            self.peer = peer
            self.forwarding = forwarding
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            guard forwarding.on.load(ordering: .relaxed) else { return }
            peer.writeAndFlush(unwrapInboundIn(data), promise: nil)
        }

        func channelInactive(context: ChannelHandlerContext) {
            peer.close(promise: nil)
            context.fireChannelInactive()
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            context.close(promise: nil)
        }
    }
}

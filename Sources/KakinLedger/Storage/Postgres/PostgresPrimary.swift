import Logging
import PostgresNIO
import Synchronization

/// The pool of connections to the cluster's primary, among the hosts the configuration names.
///
/// With one host it is that host's pool and nothing more. With several (a primary and its
/// standbys), the ledger writes to the one PostgreSQL says is not in recovery
/// (`pg_is_in_recovery()`): it asks each host in turn when the ledger starts, and a watch asks the
/// host in use every ``watchInterval``. When that host is down or has become a standby, the watch
/// asks the others, and the first that is a primary (a promoted standby) gets a new pool; the old
/// pool is closed, and operations waiting for its connections fail as unavailable, which the
/// server answers with a retryable 503. While no host is a primary (the host in use failed
/// ``downAfter`` questions in a row, or said it is a standby), operations fail the same way at once
/// instead of waiting for a connection. The watch keeps to the primary it found while that one stays a primary, so a former
/// primary that comes back is never written to in its place.
final class PostgresPrimary: Sendable {
    typealias Endpoint = PostgresConnectionOptions.Endpoint

    /// A pool, the task that runs it, and its leases not yet ended.
    private struct Pool: Sendable {
        let client: PostgresClient
        let running: Task<Void, Never>
        let waiters = PostgresWaiters()

        init(_ client: PostgresClient) {
            self.client = client
            // Started at once, so that the pool runs before the first lease asks for a connection.
            if #available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *) {
                running = Task.immediate { await client.run() }
            } else {
                running = Task { await client.run() }
            }
        }

        func close() async {
            running.cancel()
            await running.value
        }
    }

    private struct State: Sendable {
        var index: Int
        var pool: Pool
        /// Whether operations go to the pool: false once the host in use has failed
        /// ``downAfter`` questions in a row (or says it is a standby) and no other host is the primary.
        var available = true
        /// The questions in a row the host in use did not answer as the primary.
        var failures = 0
    }

    /// The questions in a row the host in use may fail before operations fail at once.
    static let downAfter = 2

    /// How often the watch asks the host in use whether it is still the primary.
    static let watchInterval: Duration = .seconds(1)
    /// How long one question to a host may take.
    static let probeWait: Duration = .seconds(1)
    /// How long a starting ledger asks for a primary before it goes on with the host it has, and
    /// how long each of those questions may take.
    static let startWait: Duration = .seconds(30)
    static let startProbeWait: Duration = .seconds(10)

    let endpoints: [Endpoint]
    private let logger: Logger
    private let makeClient: @Sendable (Endpoint, _ connections: Int?) -> PostgresClient
    private let state: Mutex<State>
    /// A pool of one connection per host, for the questions (only with several hosts).
    private let probes: [Pool]
    private let watch = Mutex<Task<Void, Never>?>(nil)

    /// Opens the pool of the first host (and, with several, a one-connection pool of each host
    /// for the questions). `makeClient` makes a host's pool: the ledger's settings, or at most
    /// `connections` connections when given.
    init(
        endpoints: [Endpoint], logger: Logger,
        makeClient: @escaping @Sendable (Endpoint, _ connections: Int?) -> PostgresClient
    ) {
        self.endpoints = endpoints
        self.logger = logger
        self.makeClient = makeClient
        state = Mutex(State(index: 0, pool: Pool(makeClient(endpoints[0], nil))))
        probes = endpoints.count > 1 ? endpoints.map { Pool(makeClient($0, 1)) } : []
    }

    /// The pool of the host in use.
    var client: PostgresClient { state.withLock { $0.pool.client } }

    /// The pool of the host in use for an operation.
    /// - Throws: ``LedgerStoreError`` `unavailable` at once while no host answers as the primary.
    func pool() throws(LedgerStoreError) -> (client: PostgresClient, waiters: PostgresWaiters) {
        let (pool, available) = state.withLock { ($0.pool, $0.available) }
        guard available else {
            throw LedgerStoreError(
                .unavailable,
                "no PostgreSQL primary among \(endpoints.map(\.description).joined(separator: ", ")) (waiting for one)")
        }
        return (pool.client, pool.waiters)
    }

    /// The host in use.
    var endpoint: Endpoint { endpoints[state.withLock { $0.index }] }

    /// With several hosts, moves to the primary among them when the host in use is not one (asking
    /// again, up to ``startWait``, while none answers as one: a server starting during a failover);
    /// then keeps watching. Nothing with one host.
    func start() async {
        guard !probes.isEmpty else { return }
        // A new pool's first connection can take longer than a question may: at start each host
        // has the whole wait, and no answer makes operations fail at once yet.
        let deadline = ContinuousClock.now + Self.startWait
        while await !follow(wait: Self.startProbeWait, failing: false), ContinuousClock.now < deadline {
            try? await Task.sleep(for: Self.watchInterval)
        }
        watch.withLock { task in
            guard task == nil else { return }
            task = Task { [weak self] in
                while !Task.isCancelled {
                    try? await Task.sleep(for: Self.watchInterval)
                    guard let self, !Task.isCancelled else { return }
                    await self.follow()
                }
            }
        }
    }

    /// Asks the host in use whether it is the primary, and when it is not, the others in turn
    /// (each question waiting up to `wait`); moves to the first that is. With `failing`, counts a
    /// question the host in use did not answer as the primary towards failing operations at once.
    /// Whether the host in use is the primary now.
    @discardableResult
    func follow(wait: Duration = probeWait, failing: Bool = true) async -> Bool {
        let current = state.withLock { $0.index }
        let answer = await isPrimary(current, wait: wait)
        if answer == true {
            let back = state.withLock { state in
                defer { (state.available, state.failures) = (true, 0) }
                return !state.available
            }
            if back { logger.notice("the PostgreSQL primary answers again", metadata: ["host": "\(endpoints[current])"]) }
            return true
        }
        for index in endpoints.indices where index != current {
            guard await isPrimary(index, wait: wait) == true else { continue }
            let pool = Pool(makeClient(endpoints[index], nil))
            let old = state.withLock { state in
                defer { state = State(index: index, pool: pool) }
                return state.pool
            }
            logger.warning(
                "the PostgreSQL primary moved",
                metadata: ["from": "\(endpoints[current])", "to": "\(endpoints[index])"])
            // What waits for the old host's connections, or runs on them, is answered now, and
            // retried by its clients (a write that did commit there is a duplicate then).
            old.waiters.abandonAll(
                "the PostgreSQL primary moved from \(endpoints[current]) to \(endpoints[index])", leased: true)
            await old.close()
            return true
        }
        guard failing else { return false }
        let down = state.withLock { state in
            state.failures += 1
            let down = state.available && (answer == false || state.failures >= Self.downAfter)
            if down { state.available = false }
            return down
        }
        guard down else { return false }
        logger.error(
            "no PostgreSQL primary: operations fail at once until one answers",
            metadata: ["host": "\(endpoints[current])", "standby": "\(answer == false)"])
        state.withLock { $0.pool }.waiters.abandonAll("\(endpoints[current]) is no longer the PostgreSQL primary, and no other host is", leased: false)
        return false
    }

    /// Whether the host at `index` answers that it is not in recovery; `nil` when it does not answer.
    private func isPrimary(_ index: Int, wait: Duration) async -> Bool? {
        let inRecovery = try? await PostgresLedger.lease(client: probes[index].client, wait: wait, limit: wait) {
            connection in
            try await connection.rows("SELECT pg_is_in_recovery()").first?.decode(Bool.self)
        }
        return inRecovery.flatMap { $0 }.map { !$0 }
    }

    /// Stops the watch and closes every pool.
    func shutdown() async {
        let task = watch.withLock { task in
            defer { task = nil }
            return task
        }
        task?.cancel()
        await task?.value
        let pool = state.withLock { $0.pool }
        await pool.close()
        for probe in probes { await probe.close() }
    }
}

import Foundation
import KakinLedger
import HTTPTypes
import NIOHTTPTypes
import HummingbirdCore
import NIOCore
import Synchronization

/// Keeps the server's open connections below the open-file limit, so that running out of
/// descriptors never stops the server from accepting: past ``maxConnections``, every new
/// connection closes the connection that has been idle longest (one that has not yet sent a whole
/// request head, or a kept-alive one between requests). A connection in the middle of a request is
/// never closed.
///
/// Without it, clients that open connections and send nothing (by mistake or to exhaust the
/// server) take every descriptor until the idle timeout closes them; meanwhile nothing else is
/// accepted, not even `/health`. With it, each new connection makes room for itself, and the
/// descriptors kept in reserve below the limit stay free for the database, content files and
/// the accept itself.
public final class ConnectionLimiter: Sendable {
    /// The most connections kept open; a new one beyond it closes the longest idle one.
    public var maxConnections: Int { state.withLock { $0.max } ?? Self.defaultMax(reserve: reserve) }
    private let reserve: Int
    private let state: Mutex<State>

    struct State {
        var max: Int?
        var nextID = 0
        /// Open connections by ID: their channel, whether a request is in progress, and when they
        /// last became idle.
        var open: [Int: Connection] = [:]
        var closedForRoom = 0
    }

    struct Connection {
        let channel: any Channel
        var busy: Bool
        var idleSince: ContinuousClock.Instant
    }

    /// - Parameters:
    ///   - maxConnections: the cap; `nil` takes the open-file soft limit (read when the first
    ///     connection arrives, after the server raised it) less `reserve`.
    ///   - reserve: descriptors kept free for everything but client connections.
    public init(maxConnections: Int? = nil, reserve: Int = 256) {
        self.reserve = reserve
        state = Mutex(State(max: maxConnections))
    }

    /// Connections closed so far to make room for new ones.
    public var closedForRoom: Int { state.withLock { $0.closedForRoom } }

    /// Connections open now.
    public var openConnections: Int { state.withLock { $0.open.count } }

    /// A channel handler for one connection, to add to its pipeline after HTTP decoding.
    public func handler() -> ConnectionLimiterHandler { ConnectionLimiterHandler(limiter: self) }

    func register(_ channel: any Channel) -> Int {
        let now = ContinuousClock.now
        let (id, evicted) = state.withLock { state -> (Int, [any Channel]) in
            if state.max == nil { state.max = Self.defaultMax(reserve: reserve) }
            let id = state.nextID
            state.nextID += 1
            state.open[id] = Connection(channel: channel, busy: false, idleSince: now)
            var evicted: [any Channel] = []
            let excess = state.open.count - (state.max ?? .max)
            if excess > 0 {
                let idle = state.open.filter { !$0.value.busy && $0.key != id }
                    .sorted { $0.value.idleSince < $1.value.idleSince }
                    .prefix(excess)
                for (key, connection) in idle {
                    state.open[key] = nil
                    evicted.append(connection.channel)
                }
                state.closedForRoom += evicted.count
            }
            return (id, evicted)
        }
        for channel in evicted { channel.close(promise: nil) }
        return id
    }

    func setBusy(_ id: Int, _ busy: Bool) {
        let now = ContinuousClock.now
        state.withLock { state in
            guard state.open[id] != nil else { return }
            state.open[id]?.busy = busy
            if !busy { state.open[id]?.idleSince = now }
        }
    }

    func unregister(_ id: Int) {
        _ = state.withLock { $0.open.removeValue(forKey: id) }
    }

    static func defaultMax(reserve: Int) -> Int {
        let limit = ProcessLimits.openFileLimit.map { Int(clamping: $0) } ?? 4096
        return max(limit - reserve, limit / 2, 16)
    }
}

/// Tells a ``ConnectionLimiter`` when its connection opens, starts and ends requests, and closes.
public final class ConnectionLimiterHandler: ChannelDuplexHandler, RemovableChannelHandler {
    public typealias InboundIn = HTTPRequestPart
    public typealias InboundOut = HTTPRequestPart
    public typealias OutboundIn = HTTPResponsePart
    public typealias OutboundOut = HTTPResponsePart

    let limiter: ConnectionLimiter
    private var id: Int?

    init(limiter: ConnectionLimiter) {
        self.limiter = limiter
    }

    public func handlerAdded(context: ChannelHandlerContext) {
        id = limiter.register(context.channel)
    }

    public func handlerRemoved(context: ChannelHandlerContext) {
        if let id { limiter.unregister(id) }
        id = nil
    }

    public func channelInactive(context: ChannelHandlerContext) {
        if let id { limiter.unregister(id) }
        id = nil
        context.fireChannelInactive()
    }

    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head = unwrapInboundIn(data), let id { limiter.setBusy(id, true) }
        context.fireChannelRead(data)
    }

    public func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data), let id { limiter.setBusy(id, false) }
        context.write(data, promise: promise)
    }
}

import Crypto
import Foundation
public import Hummingbird
import KakinHTTP
public import NIOCore

/// The request context of the sandbox's routes: Hummingbird's core context and the address the
/// request came from, which ``SandboxAccessPolicy`` decides on.
public struct SandboxRequestContext: RequestContext, RemoteAddressRequestContext {
    /// Hummingbird's own part of the context.
    public var coreContext: CoreRequestContextStorage
    /// The peer's address (`nil` in in-process tests).
    public let remoteAddress: SocketAddress?

    /// Creates the context of a request that arrived on `source`'s channel.
    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }
}

/// Who may use the sandbox's device and control APIs (every path under `/v1/`): with them anyone
/// can mint purchases the purchase server trusts, clear testers, move the clock or point
/// `notificationURL` anywhere. Apple's own APIs (`/verifyReceipt`, the App Store Server API under
/// `/inApps`, which asks for its own bearer token), `/ocsp` and `/health` are not affected.
///
/// A sandbox bound to loopback needs nothing (``everyone``). One bound to another address
/// answers requests from this machine only (``Rule/loopbackOnly``), or also those from other hosts that
/// carry `Authorization: Bearer <token>` (``Rule/loopbackOrToken(_:)``).
public struct SandboxAccessPolicy: Sendable {
    /// Whom the device and control APIs answer.
    public enum Rule: Sendable, Equatable {
        /// Every peer.
        case everyone
        /// Peers on this machine (loopback addresses) only.
        case loopbackOnly
        /// Peers on this machine, and other peers presenting the token as a bearer token.
        case loopbackOrToken(String)
    }

    /// Whom the device and control APIs answer.
    public let rule: Rule
    /// Whether a peer is on this machine; ``isLoopback(_:)`` unless a test puts another in its place.
    public let isLocal: @Sendable (SocketAddress?) -> Bool

    /// Creates a policy; `isLocal` decides which peers are on this machine (tests pass one that
    /// says no, to play a peer on another host from a socket on 127.0.0.1).
    public init(_ rule: Rule, isLocal: @escaping @Sendable (SocketAddress?) -> Bool = SandboxAccessPolicy.isLoopback) {
        self.rule = rule
        self.isLocal = isLocal
    }

    /// The policy of a sandbox bound to loopback: no check.
    public static let everyone = SandboxAccessPolicy(.everyone)

    /// The policy of a sandbox bound to `host`: ``Rule/everyone`` on a loopback address,
    /// ``Rule/loopbackOrToken(_:)`` with a token, ``Rule/loopbackOnly`` otherwise.
    public static func forHost(_ host: String, token: String?) -> SandboxAccessPolicy {
        if let token { return SandboxAccessPolicy(.loopbackOrToken(token)) }
        return isLoopbackHost(host) ? .everyone : SandboxAccessPolicy(.loopbackOnly)
    }

    /// Whether `address` is on this machine: `127.0.0.0/8`, `::1`, an IPv4-mapped `127.x` address, or
    /// a Unix domain socket. An unknown address is not.
    @Sendable public static func isLoopback(_ address: SocketAddress?) -> Bool {
        PeerAddress.isLoopback(address)
    }

    /// Whether a host to bind is a loopback address (`127.x.x.x`, `::1`, `localhost`): then no other
    /// machine can reach the sandbox.
    public static func isLoopbackHost(_ host: String) -> Bool {
        let trimmed = host.trimmingCharacters(in: CharacterSet(charactersIn: "[]")).lowercased()
        if trimmed == "localhost" || trimmed == "::1" || trimmed == "0:0:0:0:0:0:0:1" { return true }
        let parts = trimmed.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
    }

    /// Why a request is refused, or `nil` when it may go on.
    func refusal(path: String, authorization: String?, peer: SocketAddress?) -> Response? {
        guard rule != .everyone, Self.isGuarded(path), !isLocal(peer) else { return nil }
        guard case .loopbackOrToken(let token) = rule else {
            return ServiceJSON.error(
                .forbidden, code: "forbidden",
                message: """
                    the sandbox's device and control APIs answer this machine only; start it with a sandbox \
                    token (kakin serve --sandbox-token) to let other hosts in
                    """)
        }
        let presented = authorization.flatMap { $0.hasPrefix("Bearer ") ? String($0.dropFirst(7)) : nil }
        // Digests compare in constant time, whatever the lengths.
        guard let presented, SHA256.hash(data: Data(presented.utf8)) == SHA256.hash(data: Data(token.utf8)) else {
            var response = ServiceJSON.error(
                .unauthorized, code: "unauthorized",
                message: "requests from other hosts need the sandbox token (Authorization: Bearer …)")
            response.headers[.wwwAuthenticate] = "Bearer"
            return response
        }
        return nil
    }

    /// The device and control APIs: every path under `/v1/`.
    static func isGuarded(_ path: String) -> Bool {
        path.split(separator: "/").first == "v1"
    }
}

/// Answers the device and control APIs' requests that ``SandboxAccessPolicy`` refuses, before any
/// route runs (403, or 401 with `WWW-Authenticate: Bearer`).
struct SandboxAccessMiddleware: RouterMiddleware {
    typealias Context = SandboxRequestContext
    let policy: SandboxAccessPolicy

    func handle(
        _ request: Request, context: SandboxRequestContext,
        next: (Request, SandboxRequestContext) async throws -> Response
    ) async throws -> Response {
        if let refusal = policy.refusal(
            path: request.uri.path, authorization: request.headers[.authorization], peer: context.remoteAddress)
        {
            return refusal
        }
        return try await next(request, context)
    }
}

public import NIOCore

/// Where a request's connection comes from, as the HTTP servers of the package decide it.
public enum PeerAddress {
    /// Whether `address` is on this machine: `127.0.0.0/8`, `::1`, an IPv4-mapped `127.x` address,
    /// or a Unix domain socket. An unknown address is not.
    @Sendable public static func isLoopback(_ address: SocketAddress?) -> Bool {
        switch address {
        case .unixDomainSocket?:
            return true
        case .v4?, .v6?:
            guard let ip = address?.ipAddress?.lowercased() else { return false }
            return ip.hasPrefix("127.") || ip == "::1" || ip.hasPrefix("::ffff:127.")
        case nil:
            return false
        }
    }
}

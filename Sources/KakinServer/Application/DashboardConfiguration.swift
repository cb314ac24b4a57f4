import Foundation
import KakinLedger

/// The dashboard's settings: who may sign in and for how long.
public struct DashboardConfiguration: Sendable {
    /// Whether `/dashboard` is served at all.
    public var enabled = true
    /// A password accepted at sign-in besides the secret keys (`nil`: the secret keys only).
    public var adminPassword: String?
    /// How long a session lasts, on the server's clock.
    public var sessionSeconds = 12 * 3600

    /// Whether a request's `X-Forwarded-Proto` is believed: set it when the server is reached only
    /// through a proxy that sets that header (and replaces any the client sent). Cookies of a
    /// request that came over HTTPS are `Secure`.
    public var trustForwardedProto = false

    /// Creates settings; each value defaults to the one described on its property.
    public init(
        enabled: Bool = true, adminPassword: String? = nil, sessionSeconds: Int = 12 * 3600,
        trustForwardedProto: Bool = false
    ) {
        self.enabled = enabled
        self.adminPassword = adminPassword
        self.sessionSeconds = sessionSeconds
        self.trustForwardedProto = trustForwardedProto
    }
}

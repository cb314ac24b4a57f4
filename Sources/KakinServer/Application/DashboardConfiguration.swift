import Foundation
import KakinLedger

/// The dashboard's settings: who may sign in, for how long, and how its cookies are sent.
///
/// An app's secret key signs in to that app only (every app whose secret key it is); the
/// ``operatorKey`` signs in to every app.
public struct DashboardConfiguration: Sendable {
    /// Whether `/dashboard` is served at all.
    public var enabled = true
    /// The deployment's operator key: it signs in to every app (`nil`: each app's secret key
    /// signs in to its own app only, and nothing opens them all).
    public var operatorKey: String?
    /// How long a session lasts, on the server's clock.
    public var sessionSeconds = 12 * 3600

    /// Whether a request's `X-Forwarded-Proto` is believed: set it when the server is reached only
    /// through a proxy that sets that header (and replaces any the client sent). Cookies of a
    /// request that came over HTTPS are `Secure`.
    public var trustForwardedProto = false

    /// Whether every cookie is `Secure`, whatever the request came over: true by default, so that a
    /// production server's cookies stay on HTTPS even behind a TLS proxy it was not told to trust.
    /// `kakin serve`, a development server over plain HTTP on localhost, turns it off; cookies of a
    /// request that came over HTTPS are `Secure` either way.
    public var secureCookies = true

    /// The older name of ``operatorKey``, kept for configurations written before it.
    public var adminPassword: String? {
        get { operatorKey }
        set { operatorKey = newValue }
    }

    /// Creates settings; each value defaults to the one described on its property.
    public init(
        enabled: Bool = true, operatorKey: String? = nil, sessionSeconds: Int = 12 * 3600,
        trustForwardedProto: Bool = false, secureCookies: Bool = true
    ) {
        self.enabled = enabled
        self.operatorKey = operatorKey
        self.sessionSeconds = sessionSeconds
        self.trustForwardedProto = trustForwardedProto
        self.secureCookies = secureCookies
    }
}

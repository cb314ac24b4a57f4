import Foundation
public import KakinServer
import KakinLedger

extension ServerDependencies {
    /// Adds the operators' dashboard at `/dashboard` to the server `buildApplication(configuration:dependencies:)`
    /// builds, when its configuration enables it (`dashboard.enabled`, the default). `sandbox` is a
    /// sandbox App Store running in the same process, driven by the dashboard's transaction
    /// manager; `nil` for a server in front of the real App Store. `sandboxApp` is the app whose
    /// products it sells: sessions that open that app use the transaction manager (without it,
    /// only the operator key's sessions do).
    public mutating func addDashboard(sandbox: (any SandboxControl)? = nil, sandboxApp: String? = nil) {
        additionalRoutes.append { router, server in
            guard server.configuration.dashboard.enabled else { return }
            try DashboardRoutes(
                service: server.service, configuration: server.configuration.dashboard, reconciliations: server.reconciliations,
                sandbox: sandbox, sandboxApp: sandboxApp,
                webhookEndpoints: server.configuration.webhooks.map(\.url.absoluteString),
                formKey: DashboardSessions.formKey(from: server.serverKey), now: server.now, logger: server.logger,
                signInThrottle: server.signInThrottle
            ).add(to: router)
        }
    }
}

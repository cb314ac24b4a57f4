public import Foundation
public import KakinServer
public import KakinLedger

extension ServerDependencies {
    /// Adds the operators' dashboard at `/dashboard` to the server `buildApplication(configuration:dependencies:)`
    /// builds, when its configuration enables it (`dashboard.enabled`, the default). `sandbox` is a
    /// sandbox App Store running in the same process, driven by the dashboard's transaction
    /// manager; `nil` for a server in front of the real App Store.
    public mutating func addDashboard(sandbox: (any SandboxControl)? = nil) {
        additionalRoutes.append { router, server in
            guard server.configuration.dashboard.enabled else { return }
            try DashboardRoutes(
                service: server.service, configuration: server.configuration.dashboard, reconciliations: server.reconciliations,
                sandbox: sandbox, webhookEndpoints: server.configuration.webhooks.map(\.url.absoluteString),
                formKey: DashboardSessions.formKey(from: server.serverKey), now: server.now, logger: server.logger,
                signInThrottle: server.signInThrottle
            ).add(to: router)
        }
    }
}

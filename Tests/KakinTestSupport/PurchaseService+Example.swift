import AppStoreModels
import Foundation
import KakinLedger
import KakinServer
import X509

extension ExampleApp {
    /// What the server grants for each product of the example catalog (``grantsFile``).
    public static func grants() throws -> GrantsCatalog {
        try GrantsCatalog.load(from: Data(contentsOf: grantsFile))
    }

    /// The example app as the tests' servers configure it: the sandbox environment only, trusting
    /// `root`, with the publishable key `pk_test` and the secret key `sk_test`.
    public static func configuration(
        root: Certificate, environments: Set<AppStoreEnvironment> = [.sandbox]
    ) -> AppConfiguration {
        AppConfiguration(
            bundleID: bundleID, appAppleID: appAppleID, environments: environments, sandboxRoots: [root],
            publicKey: "pk_test", secretKey: "sk_test")
    }
}

extension PurchaseService {
    /// The purchase service of the tests over `store`: the example app alone, configured as
    /// ``ExampleApp/configuration(root:environments:)`` says and then by `configure` (an App Store
    /// Server API key, a revocation mode, a transfer policy, …).
    public static func example(
        store: any LedgerStore, root: Certificate, environments: Set<AppStoreEnvironment> = [.sandbox],
        grants: GrantsCatalog = GrantsCatalog(), clawbackPolicy: ClawbackPolicy = .clampAtZero,
        verifyReceiptClient: any VerifyReceiptClient = URLSessionVerifyReceiptClient(),
        now: @escaping @Sendable () -> Date = { Date() },
        configure: (inout AppConfiguration) -> Void = { _ in }
    ) -> PurchaseService {
        var app = ExampleApp.configuration(root: root, environments: environments)
        configure(&app)
        return PurchaseService(
            store: store, apps: [app], grants: grants, clawbackPolicy: clawbackPolicy,
            verifyReceiptClient: verifyReceiptClient, now: now)
    }
}

import AppStoreTesting
import Foundation
import KakinServer
import StoreSandbox

/// Builds sandbox App Stores (``SandboxEngine``) that sign as the example app (``ExampleApp``).
///
/// Either over a catalog (the example catalog, usually), whose storefronts and products the engine
/// sells, or over products given in code.
public enum ExampleSandbox {
    /// The signer of the example app with `authority`'s certificates.
    public static func signer(authority: SandboxCertificateAuthority) -> SandboxSigner {
        SandboxSigner(authority: authority, bundleID: ExampleApp.bundleID, appAppleID: ExampleApp.appAppleID)
    }

    /// An engine selling `catalog`'s products in its storefronts, signing as the example app.
    ///
    /// - Parameters:
    ///   - catalog: what is sold; tests pass ``ExampleApp/catalog()`` unless they build their own.
    ///   - authority: the certificate authority that signs.
    ///   - clock: the engine's clock.
    ///   - commitmentPlans: whether the catalog's monthly commitment plans are sold (off: none are).
    ///   - authorityDirectory: where the engine keeps the certificates it makes after a revocation.
    ///   - realClock: the wall clock of the certificates the engine makes.
    public static func engine(
        catalog: SandboxCatalog, authority: SandboxCertificateAuthority, clock: SandboxClock,
        commitmentPlans: Bool = false, authorityDirectory: URL? = nil,
        realClock: @escaping @Sendable () -> Date = { Date() }
    ) throws -> SandboxEngine {
        var plans: SandboxEngine.CommitmentPlanLookup = { _, _ in nil }
        if commitmentPlans { plans = catalog.commitmentPlanLookup }
        return try SandboxEngine(
            signer: signer(authority: authority), clock: clock, storefrontIDs: catalog.storefrontIdentifiers,
            authorityDirectory: authorityDirectory, realClock: realClock, commitmentPlans: plans,
            products: catalog.engineLookup)
    }

    /// An engine selling `products` (by product ID, in every storefront), signing as the example app.
    ///
    /// - Parameters:
    ///   - products: what is sold, by product ID.
    ///   - storefrontIDs: the App Store's numeric ID of each storefront the engine knows (none: the
    ///     engine's default).
    ///   - authority: the certificate authority that signs.
    ///   - clock: the engine's clock.
    ///   - store: where the engine keeps its state (in memory by default).
    ///   - commitmentPlans: the monthly commitment plan of each product that has one.
    public static func engine(
        products: [String: SandboxProductInfo], storefrontIDs: [String: String] = [:],
        authority: SandboxCertificateAuthority, clock: SandboxClock,
        store: any SandboxStateStore = MemoryStateStore(),
        commitmentPlans: @escaping SandboxEngine.CommitmentPlanLookup = { _, _ in nil }
    ) throws -> SandboxEngine {
        try SandboxEngine(
            signer: signer(authority: authority), clock: clock, store: store, storefrontIDs: storefrontIDs,
            commitmentPlans: commitmentPlans, products: { id, _ in products[id] })
    }
}

extension SandboxEngine {
    /// A purchase of the example catalog's `product` (`com.example.kakin.<product>`) by `tester`
    /// (made when new), signed at `date` as the device would receive it.
    public func buy(
        _ product: String, tester: String = "tester", quantity: Int = 1, at date: Date
    ) throws -> (SandboxTransaction, String) {
        if (try? self.tester(tester)) == nil { _ = try createTester(name: tester, id: tester) }
        guard
            case .purchased(let transaction) = try purchase(
                .init(testerID: tester, productID: "com.example.kakin.\(product)", quantity: quantity))
        else { throw ServerError(.invalidRequest, "the sandbox did not sell \(product)") }
        return (transaction, try signer.signTransaction(transaction, at: date))
    }
}

import AppStoreTesting
import Foundation
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

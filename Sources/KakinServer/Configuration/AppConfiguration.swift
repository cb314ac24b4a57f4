public import AppStoreModels
public import AppStoreSecurity
public import Foundation
import KakinLedger
public import X509

/// What happens when a customer restores a purchase that the ledger already gives to another
/// customer of the same app (a second account on the same Apple ID, a reinstall under a new user ID).
public enum TransferPolicy: String, Codable, Hashable, Sendable, CaseIterable {
    /// The purchase moves to the customer who restored it: the entitlement leaves the old owner,
    /// a `transaction.transferred` ledger event (and webhook) records the move.
    case transferToNewUser
    /// The purchase stays with its first owner; the restore is refused with 409 `conflict`.
    case keepWithOriginal
}

/// Who is granted what a sandbox account bought, by an app that accepts Production data too
/// (`apps[].sandboxPurchases`).
///
/// App Review buys with sandbox accounts in the build it reviews, which talks to the production
/// server, so a production server must accept sandbox purchases to pass review. But so does every
/// TestFlight tester, whose purchases cost nothing.
public enum SandboxPurchasePolicy: Hashable, Sendable {
    /// Sandbox purchases grant like paid ones, to every customer (the default, so App Review passes);
    /// the server warns at start for every app that accepts both environments under it.
    case grant
    /// Sandbox purchases are accepted only from the listed app user IDs (the team's testers and the
    /// account App Review signs in with); for everyone else an upload of one is refused with 403
    /// `forbidden`, cause `sandboxPurchaseNotAllowed`.
    case allowList(Set<String>)

    /// Whether a sandbox purchase uploaded for `appUserID` may be recorded.
    public func allows(_ appUserID: String) -> Bool {
        switch self {
        case .grant: true
        case .allowList(let allowed): allowed.contains(appUserID)
        }
    }
}

/// One app (bundle ID) served by the server, with its trust settings, keys and catalog.
public struct AppConfiguration: Sendable {
    /// The app's bundle ID.
    public var bundleID: String
    /// The app's App Store ID; required to accept Production data.
    public var appAppleID: Int64?
    /// The environments accepted from this app.
    public var environments: Set<AppStoreEnvironment>
    /// The environment a read of the app's figures takes when none is named: Production when
    /// the app takes it, otherwise Sandbox.
    public var defaultEnvironment: AppStoreEnvironment {
        environments.contains(.production) ? .production : .sandbox
    }
    /// Roots trusted besides Apple Root CA - G3 (for example the sandbox App Store's root).
    public var sandboxRoots: [Certificate]
    /// The publishable key the app sends on customer endpoints.
    public var publicKey: String
    /// The secret key for spend, admin and content upload.
    public var secretKey: String
    /// The app-specific shared secret sent to verifyReceipt.
    public var sharedSecret: String?
    /// Apple's verifyReceipt endpoint for production receipts (or the sandbox App Store's).
    public var verifyReceiptProductionURL: URL
    /// Apple's verifyReceipt endpoint for sandbox receipts (or the sandbox App Store's), where a
    /// production receipt answered 21007 is sent again.
    public var verifyReceiptSandboxURL: URL
    /// What each product grants; `nil` uses the service's shared grants.
    public var grants: GrantsCatalog?
    /// Product types by ID, for receipt-derived transactions; `nil` uses the service's.
    public var productTypes: [String: ProductType]?
    /// The `.storekit` catalog served at `/v1/catalog`.
    public var catalog: StoreKitConfiguration?
    /// Restores onto another customer: moved or refused.
    public var transferPolicy: TransferPolicy
    /// The App Store Server API key, for reconciliation and for fetching again a transaction
    /// whose signing certificate has expired since it was signed; `nil` when none is configured.
    public var serverAPI: ServerAPIAccess?
    /// How signing certificates are checked for revocation; `nil` takes each environment's
    /// default (`RevocationMode.defaultMode(for:)`: `require` for Production, `bestEffort` for
    /// Sandbox).
    public var revocation: RevocationMode?
    /// Which promotional offers the server signs, and for whom; the In-App Purchase key of
    /// ``serverAPI`` signs them.
    public var offers: OfferPolicy
    /// What the server tells Apple when a customer asks for a refund; `nil` sends nothing.
    public var consumption: ConsumptionPolicy?
    /// Whether the server sets the owner's app account token (`AppAccountToken` in KakinWire) on
    /// purchases that arrive without one or move to another customer, through the App Store
    /// Server API (with ``serverAPI`` only).
    public var setsAppAccountTokens: Bool
    /// Whether the app is in the App Store Small Business Program: Apple's commission is then
    /// 15 % of every sale in the metrics' proceeds, instead of 30 % (15 % for a subscription's
    /// transactions after its first year of paid service).
    public var smallBusinessProgram = false
    /// The app's customer tokens: with `required`, every publishable-key request naming an
    /// identified customer must carry a token the app's backend signed for that customer.
    /// `nil`: the app has none, and a customer is whoever the request names.
    public var customerTokens: CustomerTokenPolicy?
    /// Who a sandbox purchase is accepted from.
    public var sandboxPurchases: SandboxPurchasePolicy = .grant
    /// The customer data erased when a parent withdraws consent for a minor (`RESCIND_CONSENT`):
    /// by default all of it (`ConsentScopedData.allCases`); an empty set erases nothing, and
    /// access ends either way.
    public var consentScopedData: Set<ConsentScopedData> = Set(ConsentScopedData.allCases)
    /// How the App Store's `Get Retention Message` requests are answered; `nil`: with no choice,
    /// so the App Store shows the default message of the product and locale.
    public var retention: RetentionPolicy?
    /// The app's Stripe account, for web purchases; `nil` when the app sells only in the App Store.
    public var stripe: StripeAccount?

    /// Creates an app's configuration; what is not given takes its default: both environments, Apple's
    /// hosts, the service's grants and product types, no catalog, no App Store Server API key,
    /// purchases kept with their first owner, each environment's revocation default.
    public init(
        bundleID: String, appAppleID: Int64? = nil, environments: Set<AppStoreEnvironment> = [.production, .sandbox],
        sandboxRoots: [Certificate] = [], publicKey: String, secretKey: String, sharedSecret: String? = nil,
        verifyReceiptProductionURL: URL = AppleEndpoints.verifyReceiptProduction,
        verifyReceiptSandboxURL: URL = AppleEndpoints.verifyReceiptSandbox,
        grants: GrantsCatalog? = nil, productTypes: [String: ProductType]? = nil,
        catalog: StoreKitConfiguration? = nil, transferPolicy: TransferPolicy = .keepWithOriginal,
        serverAPI: ServerAPIAccess? = nil, revocation: RevocationMode? = nil, offers: OfferPolicy = OfferPolicy(),
        consumption: ConsumptionPolicy? = nil, setsAppAccountTokens: Bool = true, smallBusinessProgram: Bool = false,
        customerTokens: CustomerTokenPolicy? = nil, sandboxPurchases: SandboxPurchasePolicy = .grant,
        consentScopedData: Set<ConsentScopedData> = Set(ConsentScopedData.allCases)
    ) {
        self.consentScopedData = consentScopedData
        self.customerTokens = customerTokens
        self.sandboxPurchases = sandboxPurchases
        self.smallBusinessProgram = smallBusinessProgram
        self.setsAppAccountTokens = setsAppAccountTokens
        self.offers = offers
        self.consumption = consumption
        self.bundleID = bundleID
        self.appAppleID = appAppleID
        self.environments = environments
        self.sandboxRoots = sandboxRoots
        self.publicKey = publicKey
        self.secretKey = secretKey
        self.sharedSecret = sharedSecret
        self.verifyReceiptProductionURL = verifyReceiptProductionURL
        self.verifyReceiptSandboxURL = verifyReceiptSandboxURL
        self.grants = grants
        self.productTypes = productTypes
        self.catalog = catalog
        self.transferPolicy = transferPolicy
        self.serverAPI = serverAPI
        self.revocation = revocation
    }

    /// What a production server should hear at start about this app's settings: sandbox purchases
    /// granted to everyone by an app that accepts Production data, and customers who need no token.
    public var securityWarnings: [String] {
        var warnings: [String] = []
        if environments.contains(.production), environments.contains(.sandbox), sandboxPurchases == .grant {
            warnings.append(
                "\(bundleID) grants sandbox purchases to every customer (sandboxPurchases: grant): a TestFlight tester's free purchase unlocks the App Store build for the same app user ID; set sandboxPurchases to allowList to accept them from listed customers only"
            )
        }
        if environments.contains(.production), customerTokens?.required != true {
            warnings.append(
                "\(bundleID) does not require customer tokens: anyone holding the publishable key can act for an identified customer whose app user ID they know; set customerTokens with required: true"
            )
        }
        return warnings
    }

    /// The revocation mode for data signed in `environment`: the configured one, else the
    /// environment's default.
    public func revocationMode(for environment: AppStoreEnvironment) -> RevocationMode {
        revocation ?? RevocationMode.defaultMode(for: environment)
    }

    /// A new verifier for data signed in `environment`, if this app accepts that environment.
    ///
    /// Production trusts Apple Root CA - G3 only; Sandbox trusts G3 and the configured extra roots.
    /// ``PurchaseService`` builds these once, when it starts, so their chain caches are shared by
    /// every request. `revocation` checks the signing certificates (see ``revocationMode(for:)``);
    /// `nil` checks none.
    public func verifier(
        for environment: AppStoreEnvironment, revocation: RevocationChecker? = nil,
        now: @escaping @Sendable () -> Date
    ) -> SignedDataVerifier? {
        guard environments.contains(environment) else { return nil }
        let roots =
            environment == .production
            ? AppleRootCertificates.jwsRoots : AppleRootCertificates.jwsRoots + sandboxRoots
        return try? SignedDataVerifier(
            rootCertificates: roots, bundleID: bundleID, appAppleID: appAppleID, environment: environment,
            revocation: revocation, now: now)
    }
}

/// Apple's real hosts, the defaults of every endpoint.
public enum AppleEndpoints {
    /// verifyReceipt for App Store receipts.
    public static let verifyReceiptProduction = URL(string: "https://buy.itunes.apple.com/verifyReceipt")!
    /// verifyReceipt for sandbox receipts.
    public static let verifyReceiptSandbox = URL(string: "https://sandbox.itunes.apple.com/verifyReceipt")!
    /// The App Store Server API for production data, at the host Apple's own server libraries use.
    ///
    /// The older host `https://api.storekit.itunes.apple.com` still answers; a configuration that
    /// names it in `endpoints.serverAPIProduction` keeps working.
    public static let serverAPIProduction = URL(string: "https://api.storekit.apple.com")!
    /// The App Store Server API for sandbox data, at the host Apple's own server libraries use.
    ///
    /// The older host `https://api.storekit-sandbox.itunes.apple.com` still answers; a configuration
    /// that names it in `endpoints.serverAPISandbox` keeps working.
    public static let serverAPISandbox = URL(string: "https://api.storekit-sandbox.apple.com")!
}

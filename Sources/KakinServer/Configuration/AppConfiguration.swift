public import AppStoreModels
public import AppStoreSecurity
public import Foundation
public import X509

/// One app (bundle ID) served by the server, with its trust settings and keys.
public struct AppConfiguration: Sendable {
    /// The app's bundle ID.
    public var bundleID: String
    /// The app's App Store ID; required to accept Production data.
    public var appAppleID: Int64?
    /// The environments accepted from this app.
    public var environments: Set<AppStoreEnvironment>
    /// Roots trusted for Sandbox data besides Apple Root CA - G3 (the sandbox App Store's root).
    public var sandboxRoots: [Certificate]
    /// The publishable key the app sends on customer endpoints.
    public var publicKey: String
    /// The secret key for spend, admin and content upload.
    public var secretKey: String
    /// The app-specific shared secret sent to verifyReceipt.
    public var sharedSecret: String?
    /// Apple's verifyReceipt endpoints (or the sandbox App Store's).
    public var verifyReceiptProductionURL: URL
    public var verifyReceiptSandboxURL: URL

    public init(
        bundleID: String, appAppleID: Int64? = nil, environments: Set<AppStoreEnvironment> = [.production, .sandbox],
        sandboxRoots: [Certificate] = [], publicKey: String, secretKey: String, sharedSecret: String? = nil,
        verifyReceiptProductionURL: URL = URL(string: "https://buy.itunes.apple.com/verifyReceipt")!,
        verifyReceiptSandboxURL: URL = URL(string: "https://sandbox.itunes.apple.com/verifyReceipt")!
    ) {
        self.bundleID = bundleID
        self.appAppleID = appAppleID
        self.environments = environments
        self.sandboxRoots = sandboxRoots
        self.publicKey = publicKey
        self.secretKey = secretKey
        self.sharedSecret = sharedSecret
        self.verifyReceiptProductionURL = verifyReceiptProductionURL
        self.verifyReceiptSandboxURL = verifyReceiptSandboxURL
    }

    /// The verifier for data signed in `environment`, if this app accepts that environment.
    ///
    /// Production trusts Apple Root CA - G3 only; Sandbox trusts G3 and the configured sandbox roots.
    public func verifier(
        for environment: AppStoreEnvironment, now: @escaping @Sendable () -> Date
    ) -> SignedDataVerifier? {
        guard environments.contains(environment) else { return nil }
        let roots =
            environment == .production
            ? AppleRootCertificates.jwsRoots : AppleRootCertificates.jwsRoots + sandboxRoots
        return try? SignedDataVerifier(
            rootCertificates: roots, bundleID: bundleID, appAppleID: appAppleID, environment: environment, now: now)
    }
}

public import AppStoreModels
public import Foundation
public import X509

/// Verifies and decodes what the App Store signs for one app in one environment.
///
/// This is the type a server uses: configure it once with the trusted roots, the app's bundle ID,
/// its App Store app ID and the environment, then hand it every signed transaction, renewal info,
/// notification and app transaction. Chain and signature checks come from ``JWSVerifier``; on top
/// of them each kind of payload gets the app checks Apple's verifier makes:
///
/// | payload | checks |
/// | --- | --- |
/// | transaction | bundle ID, environment |
/// | renewal info | environment |
/// | notification | bundle ID, app ID (Production only), environment |
/// | app transaction | bundle ID, app ID (Production only), environment (`receiptType`) |
public struct SignedDataVerifier: Sendable {
    /// The app the payloads must belong to.
    public let bundleID: String
    /// The app's App Store identifier; required for Production, where notifications carry it.
    public let appAppleID: Int64?
    /// The environment the payloads must come from.
    public let environment: AppStoreEnvironment
    /// The JWS layer (roots, chain cache).
    public let jwsVerifier: JWSVerifier

    /// Which app-level claims to compare.
    public struct ClaimChecks: OptionSet, Sendable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }
        /// The payload's bundle ID must equal ``SignedDataVerifier/bundleID``.
        public static let bundleID = ClaimChecks(rawValue: 1)
        /// In Production, the payload's app ID must equal ``SignedDataVerifier/appAppleID``.
        public static let appAppleIDInProduction = ClaimChecks(rawValue: 2)
        /// The payload's environment must equal ``SignedDataVerifier/environment``.
        public static let environment = ClaimChecks(rawValue: 4)
        /// Every check.
        public static let all: ClaimChecks = [.bundleID, .appAppleIDInProduction, .environment]
    }

    /// Creates a verifier.
    ///
    /// - Parameters:
    ///   - rootCertificates: the trusted roots; Apple Root CA - G3 by default. Kakin's sandbox
    ///     passes its own root here.
    ///   - bundleID: the app's bundle ID.
    ///   - appAppleID: the app's App Store ID; required when `environment` is Production.
    ///   - environment: the accepted environment. `.xcode` is the explicit opt-in to Xcode's
    ///     self-signed StoreKit testing certificate.
    ///   - revocation: the OCSP check of the leaf and the intermediate (see ``RevocationChecker``);
    ///     `nil` checks none and validates chains at the signing date.
    ///   - now: the clock, used when a payload carries no signing date and, with revocation
    ///     checks, as the validation time.
    /// - Throws: ``AppStoreSecurityError/Code/invalidConfiguration`` for Production without an app ID.
    public init(
        rootCertificates: [Certificate] = AppleRootCertificates.jwsRoots,
        bundleID: String,
        appAppleID: Int64?,
        environment: AppStoreEnvironment,
        revocation: RevocationChecker? = nil,
        now: @escaping @Sendable () -> Date = { Date() }
    ) throws(AppStoreSecurityError) {
        if environment == .production, appAppleID == nil {
            throw AppStoreSecurityError(
                .invalidConfiguration, "verifying Production data needs the app's App Store ID (appAppleId)")
        }
        self.bundleID = bundleID
        self.appAppleID = appAppleID
        self.environment = environment
        jwsVerifier = JWSVerifier(
            rootCertificates: rootCertificates, trustsXcodeSigning: environment == .xcode, revocation: revocation,
            now: now)
    }

    /// Verifies `jws`, decodes it as `Payload` and compares the claims named in `checks`.
    public func verify<Payload: Decodable & SignedPayload>(
        _ jws: String, as type: Payload.Type, checking checks: ClaimChecks, at validationTime: Date? = nil
    ) async throws(AppStoreSecurityError) -> Payload {
        let verified = try await jwsVerifier.verify(jws, as: type, at: validationTime)
        try Self.check(
            verified.payload, checks: checks, bundleID: bundleID, appAppleID: appAppleID, environment: environment)
        return verified.payload
    }

    /// Verifies a JWS whose payload the caller already decoded (see ``CompactJWS/decodePayload(as:)``)
    /// and compares the claims named in `checks`: one parse and one decode per request.
    public func verify<Payload: SignedPayload & Sendable>(
        _ compact: CompactJWS, decoded payload: Payload, checking checks: ClaimChecks, at validationTime: Date? = nil
    ) async throws(AppStoreSecurityError) -> Payload {
        let verified = try await jwsVerifier.verify(compact, decoded: payload, at: validationTime)
        try Self.check(
            verified.payload, checks: checks, bundleID: bundleID, appAppleID: appAppleID, environment: environment)
        return verified.payload
    }

    /// Compares a payload's app claims with expected values; `nil` expectations are not checked.
    public static func check(
        _ payload: some SignedPayload, checks: ClaimChecks, bundleID: String?, appAppleID: Int64?,
        environment: AppStoreEnvironment?
    ) throws(AppStoreSecurityError) {
        if checks.contains(.bundleID), let bundleID, payload.signedPayloadBundleID != bundleID {
            throw AppStoreSecurityError(
                .wrongBundleID, "the payload is for another app", expected: bundleID,
                found: payload.signedPayloadBundleID ?? "no bundleId")
        }
        let payloadEnvironment = payload.signedPayloadEnvironment
        if checks.contains(.appAppleIDInProduction), let appAppleID, environment == .production,
            payload.signedPayloadAppAppleID != appAppleID
        {
            throw AppStoreSecurityError(
                .wrongAppAppleID, "the payload is for another app", expected: "\(appAppleID)",
                found: payload.signedPayloadAppAppleID.map { "\($0)" } ?? "no appAppleId")
        }
        if checks.contains(.environment), let environment, payloadEnvironment != environment {
            throw AppStoreSecurityError(
                .wrongEnvironment, "the payload was signed for another environment", expected: environment.rawValue,
                found: payloadEnvironment?.rawValue ?? "no environment")
        }
    }
}

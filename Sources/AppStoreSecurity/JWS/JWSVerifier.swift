public import AppStoreModels
import Crypto
public import Foundation
import X509

/// Verifies App Store JWS as Apple's `SignedDataVerifier` does, and decodes the payload.
///
/// In order: the compact form; `alg` must be `ES256`; `x5c` must hold exactly three certificates
/// (leaf, intermediate, root); the payload must decode; the leaf and intermediate must chain to one
/// of the trusted roots (never to the root inside `x5c`), be valid at the payload's signing date
/// (or the time the caller gives), and carry Apple's marker OIDs; with a ``RevocationChecker`` that
/// is on, the chain is instead validated at the current time and the leaf and the intermediate
/// must not be revoked (OCSP, as Apple's libraries do with online checks); finally the signature
/// must verify with the leaf's key. swift-certificates decides the chain, swift-crypto the
/// signature. App-level checks (bundle ID, app ID, environment) are in ``SignedDataVerifier``.
///
/// Verified chains are cached by the header segment, so a steady stream of transactions signed by
/// the same leaf costs one ES256 check each. A cached chain is reused only inside the interval in
/// which all its certificates are valid and, with revocation on, until its OCSP answers' `nextUpdate`.
public struct JWSVerifier: Sendable {
    /// The chain checker and its trusted roots.
    public let chainVerifier: CertificateChainVerifier
    /// Whether a single self-signed certificate (Xcode's StoreKit testing) is accepted. Off unless the
    /// caller explicitly trusts the Xcode environment.
    public let trustsXcodeSigning: Bool
    /// Checks the leaf and the intermediate with OCSP; `nil` checks nothing.
    public let revocation: RevocationChecker?
    private let now: @Sendable () -> Date
    private let cache: ChainCache

    /// Creates a verifier that trusts exactly `rootCertificates`.
    ///
    /// - Parameters:
    ///   - rootCertificates: the trusted roots; Apple Root CA - G3 for the real App Store.
    ///   - trustsXcodeSigning: accept Xcode's one self-signed certificate (its signature is still checked).
    ///   - revocation: the revocation check; `nil` (or a checker in ``RevocationMode/off``) checks
    ///     the chain at the payload's signing date and asks no responder.
    ///   - now: the clock: the validation time when revocation is checked, and when a payload has
    ///     no signing date.
    public init(
        rootCertificates: [Certificate] = AppleRootCertificates.jwsRoots,
        trustsXcodeSigning: Bool = false,
        revocation: RevocationChecker? = nil,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        chainVerifier = CertificateChainVerifier(roots: rootCertificates)
        self.trustsXcodeSigning = trustsXcodeSigning
        self.revocation = revocation?.mode == .off ? nil : revocation
        self.now = now
        cache = ChainCache()
    }

    /// A verified JWS: its header, its decoded payload, and how it was trusted.
    public struct Verified<Payload: Sendable>: Sendable {
        /// The protected header.
        public let header: JWSHeader
        /// The decoded payload.
        public let payload: Payload
        /// The time at which the chain was checked.
        public let validationTime: Date
        /// `true` when the JWS was signed by Xcode's single self-signed certificate.
        public let isXcodeSigned: Bool
    }

    /// Verifies `jws` and decodes its payload as `Payload`.
    ///
    /// - Parameter validationTime: check the chain at this time instead of the payload's signing date.
    public func verify<Payload: Decodable & SignedPayload>(
        _ jws: String, as type: Payload.Type, at validationTime: Date? = nil
    ) async throws(AppStoreSecurityError) -> Verified<Payload> {
        let compact = try CompactJWS(jws)
        return try await verify(compact, decoded: try compact.decodePayload(as: type), at: validationTime)
    }

    /// How revocation is checked: ``RevocationMode/off`` without a checker.
    public var revocationMode: RevocationMode { revocation?.mode ?? .off }

    /// Verifies a JWS whose payload the caller already decoded (to pick the app and environment
    /// from its claims), so a request parses and decodes its JWS once.
    ///
    /// - Parameters:
    ///   - compact: the parsed JWS.
    ///   - payload: `compact`'s payload, decoded by ``CompactJWS/decodePayload(as:)``.
    ///   - validationTime: check the chain at this time instead of the payload's signing date.
    public func verify<Payload: SignedPayload & Sendable>(
        _ compact: CompactJWS, decoded payload: Payload, at validationTime: Date? = nil
    ) async throws(AppStoreSecurityError) -> Verified<Payload> {
        let cached = cache.entry(forHeader: compact.encodedHeader)
        // With online checks the chain must be valid now, as in Apple's libraries; without, when
        // the payload was signed.
        let time = validationTime ?? (revocation == nil ? payload.signedPayloadDate : nil) ?? now()
        let entry: ChainCache.Entry
        if let cached, cached.holds(at: time) {
            entry = cached
        } else if let cached, cached.isValid(at: time), let revocation, let root = cached.root {
            // The chain still holds; only its revocation answers ran out. The checker asks the
            // responders once for all the requests that arrive meanwhile.
            let until = try await revocation.check(
                leaf: cached.certificates[0], intermediate: cached.certificates[1], root: root)
            entry = cached.revocationChecked(until: until)
            cache.store(entry, forHeader: compact.encodedHeader)
        } else {
            let prepared =
                if let cached {
                    PreparedHeader(header: cached.header, certificates: cached.certificates)
                } else {
                    try prepareHeader(of: compact)
                }
            entry = try await trustEntry(for: prepared, at: time)
            cache.store(entry, forHeader: compact.encodedHeader)
        }
        try compact.verifySignature(with: entry.key)
        return Verified(
            header: entry.header, payload: payload, validationTime: time, isXcodeSigned: entry.isXcodeSigned)
    }

    // MARK: - Header and chain

    /// A header that passed the format checks, with its certificates parsed but not yet trusted.
    private struct PreparedHeader {
        let header: JWSHeader
        let certificates: [Certificate]
    }

    private func prepareHeader(of compact: CompactJWS) throws(AppStoreSecurityError) -> PreparedHeader {
        let header = try compact.header()
        guard header.algorithm == "ES256" else {
            throw AppStoreSecurityError(
                .wrongAlgorithm, "App Store JWS are signed with ES256 only", expected: "ES256",
                found: header.algorithm ?? "no alg")
        }
        guard let encodedChain = header.certificateChain, !encodedChain.isEmpty else {
            throw AppStoreSecurityError(
                .malformedInput, "the header has no x5c certificate chain", expected: "x5c with 3 certificates",
                found: "no x5c")
        }
        var certificates: [Certificate] = []
        for (index, encoded) in encodedChain.enumerated() {
            guard let der = Data(base64Encoded: encoded), let certificate = try? Certificate(derEncoded: Array(der))
            else {
                throw AppStoreSecurityError(.malformedInput, "x5c[\(index)] is not a base64 DER certificate")
            }
            certificates.append(certificate)
        }
        if certificates.count == 1, trustsXcodeSigning {
            return PreparedHeader(header: header, certificates: certificates)
        }
        guard certificates.count == 3 else {
            throw AppStoreSecurityError(
                .invalidChainLength,
                certificates.count == 1
                    ? "one self-signed certificate is how Xcode signs; trust the Xcode environment to accept it"
                    : "the App Store sends leaf, intermediate and root",
                expected: "3 certificates", found: "\(certificates.count)")
        }
        return PreparedHeader(header: header, certificates: certificates)
    }

    /// A trusted entry for a header's chain at `time`: the chain verified, and with revocation on,
    /// the leaf and the intermediate checked.
    private func trustEntry(
        for prepared: PreparedHeader, at time: Date
    ) async throws(AppStoreSecurityError) -> ChainCache.Entry {
        let certificates = prepared.certificates
        let key = try Self.signingKey(of: certificates[0])
        if certificates.count == 1 {
            // Xcode signs with one self-signed certificate: no chain to check, only the signature.
            return ChainCache.Entry(
                header: prepared.header, key: key, window: nil, certificates: certificates, root: nil,
                revocationCheckedUntil: nil)
        }
        let validated = try await chainVerifier.verify(leaf: certificates[0], intermediate: certificates[1], at: time)
        let checkedUntil = try await revocation?.check(
            leaf: certificates[0], intermediate: certificates[1], root: validated.root)
        return ChainCache.Entry(
            header: prepared.header, key: key, window: validated.validFrom...validated.validUntil,
            certificates: certificates, root: validated.root, revocationCheckedUntil: checkedUntil)
    }

    static func signingKey(of certificate: Certificate) throws(AppStoreSecurityError) -> P256.Signing.PublicKey {
        guard let key = P256.Signing.PublicKey(certificate.publicKey) else {
            throw AppStoreSecurityError(
                .wrongAlgorithm, "an ES256 signature needs a P-256 signing certificate", expected: "P-256 key",
                found: "\(certificate.publicKey)")
        }
        return key
    }

    /// One line for a decoding failure: the key path and what was wrong with it.
    public static func describe(_ error: any Error) -> String {
        switch error {
        case DecodingError.keyNotFound(let key, _): return "missing \(key.stringValue)"
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context),
            DecodingError.dataCorrupted(let context):
            let path = context.codingPath.map(\.stringValue).joined(separator: ".")
            return path.isEmpty ? context.debugDescription : "\(path): \(context.debugDescription)"
        default: return "\(error)"
        }
    }
}

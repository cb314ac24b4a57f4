import Foundation
import SwiftASN1
public import X509

/// Checks a leaf and an intermediate against a set of trusted roots, the way Apple's verifiers do.
///
/// The check is deliberately narrow and strict: Apple's chains are always leaf → intermediate →
/// root, so there is no path building. The root that arrives with the data is never trusted; only
/// the roots given here are. Each failure has its own ``AppStoreSecurityError/Code`` so that an
/// expired certificate is never confused with a forged one.
public struct CertificateChainVerifier: Sendable {
    /// The only roots that anchor a chain.
    public let roots: [Certificate]
    /// Whether the leaf and the intermediate must carry Apple's marker extensions.
    public let requiresMarkerOIDs: Bool

    /// Creates a verifier that trusts exactly `roots`.
    public init(roots: [Certificate], requiresMarkerOIDs: Bool = true) {
        self.roots = roots
        self.requiresMarkerOIDs = requiresMarkerOIDs
    }

    /// The outcome of a successful check: the root that anchored the chain and the interval in
    /// which all three certificates are valid, so that a cached result can be reused for any
    /// validation time inside it.
    public struct ValidatedChain: Sendable {
        /// The trusted root that signed the intermediate.
        public let root: Certificate
        /// The latest `notValidBefore` of leaf, intermediate and root.
        public let validFrom: Date
        /// The earliest `notValidAfter` of leaf, intermediate and root.
        public let validUntil: Date

        /// Whether every certificate of the chain is valid at `time`.
        public func isValid(at time: Date) -> Bool { validFrom <= time && time <= validUntil }
    }

    /// Verifies that `leaf` was issued by `intermediate`, that `intermediate` was issued by one of
    /// the trusted roots, that all three are valid at `time`, and that the marker OIDs are present.
    public func verify(
        leaf: Certificate, intermediate: Certificate, at time: Date
    ) throws(AppStoreSecurityError)
        -> ValidatedChain
    {
        // Signatures first: a forged or foreign chain is reported as such even when it is also expired.
        let candidates = roots.filter { $0.subject == intermediate.issuer }
        guard
            let root = candidates.first(where: {
                $0.publicKey.isValidSignature(intermediate.signature, for: intermediate)
            })
        else {
            throw AppStoreSecurityError(
                .untrustedChain,
                candidates.isEmpty
                    ? "the intermediate was not issued by any trusted root"
                    : "the intermediate's signature does not verify with the trusted root of the same name",
                expected: roots.map { "\($0.subject)" }.joined(separator: " | "),
                found: "\(intermediate.issuer)"
            )
        }
        guard leaf.issuer == intermediate.subject else {
            throw AppStoreSecurityError(
                .untrustedChain, "the leaf was not issued by the intermediate",
                expected: "\(intermediate.subject)", found: "\(leaf.issuer)")
        }
        guard intermediate.publicKey.isValidSignature(leaf.signature, for: leaf) else {
            throw AppStoreSecurityError(
                .untrustedChain, "the leaf's signature does not verify with the intermediate's key")
        }
        try Self.requireCertificateAuthority(intermediate, name: "intermediate")

        for (name, certificate) in [("leaf", leaf), ("intermediate", intermediate), ("root", root)] {
            try Self.requireValidity(certificate, name: name, at: time)
            try Self.requireNoUnknownCriticalExtension(certificate, name: name)
        }

        if requiresMarkerOIDs {
            try Self.requireExtension(.AppleMarker.receiptSigner, in: leaf, name: "leaf")
            try Self.requireExtension(.AppleMarker.wwdrIntermediate, in: intermediate, name: "intermediate")
        }
        return ValidatedChain(
            root: root,
            validFrom: max(leaf.notValidBefore, intermediate.notValidBefore, root.notValidBefore),
            validUntil: min(leaf.notValidAfter, intermediate.notValidAfter, root.notValidAfter)
        )
    }

    static func requireValidity(_ certificate: Certificate, name: String, at time: Date) throws(AppStoreSecurityError) {
        let window = "\(iso8601(certificate.notValidBefore)) to \(iso8601(certificate.notValidAfter))"
        if time > certificate.notValidAfter {
            throw AppStoreSecurityError(
                .certificateExpired, "the \(name) certificate (\(certificate.subject)) had expired",
                expected: "a time within \(window)", found: iso8601(time))
        }
        if time < certificate.notValidBefore {
            throw AppStoreSecurityError(
                .certificateNotYetValid, "the \(name) certificate (\(certificate.subject)) was not yet valid",
                expected: "a time within \(window)", found: iso8601(time))
        }
    }

    static func requireCertificateAuthority(_ certificate: Certificate, name: String) throws(AppStoreSecurityError) {
        let constraints: BasicConstraints?
        do { constraints = try certificate.extensions.basicConstraints } catch {
            throw AppStoreSecurityError(.untrustedChain, "the \(name)'s basic constraints cannot be read")
        }
        guard case .isCertificateAuthority = constraints else {
            throw AppStoreSecurityError(
                .untrustedChain, "the \(name) is not a certificate authority",
                expected: "basicConstraints CA:TRUE", found: constraints.map { "\($0)" } ?? "no basicConstraints")
        }
        if let usage = try? certificate.extensions.keyUsage, !usage.keyCertSign {
            throw AppStoreSecurityError(
                .untrustedChain, "the \(name) may not sign certificates", expected: "keyCertSign", found: "\(usage)")
        }
    }

    private static let understoodCriticalExtensions: Set<ASN1ObjectIdentifier> = [
        .X509ExtensionID.basicConstraints, .X509ExtensionID.keyUsage, .X509ExtensionID.extendedKeyUsage,
        .X509ExtensionID.subjectAlternativeName, .X509ExtensionID.nameConstraints,
        .AppleMarker.receiptSigner, .AppleMarker.wwdrIntermediate,
    ]

    static func requireNoUnknownCriticalExtension(
        _ certificate: Certificate, name: String
    )
        throws(AppStoreSecurityError)
    {
        if let unknown = certificate.extensions.first(where: {
            $0.critical && !understoodCriticalExtensions.contains($0.oid)
        }) {
            throw AppStoreSecurityError(
                .untrustedChain, "the \(name) has a critical extension this verifier does not understand",
                found: "\(unknown.oid)")
        }
    }

    static func requireExtension(
        _ oid: ASN1ObjectIdentifier, in certificate: Certificate, name: String
    )
        throws(AppStoreSecurityError)
    {
        guard certificate.extensions[oid: oid] != nil else {
            throw AppStoreSecurityError(
                .missingMarkerOID, "the \(name) certificate lacks Apple's marker extension",
                expected: "\(oid)", found: "no such extension in \(certificate.subject)")
        }
    }
}

func iso8601(_ date: Date) -> String {
    date.formatted(.iso8601)
}

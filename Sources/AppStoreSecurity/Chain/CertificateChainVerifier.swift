import Foundation
import SwiftASN1
@_spi(FixedExpiryValidationTime) public import X509

/// Checks a leaf and an intermediate against a set of trusted roots, the way Apple's verifiers do:
/// with swift-certificates' `Verifier`, its RFC 5280 policy at the validation time, and
/// ``AppStoreChainPolicy`` (exactly leaf → intermediate → trusted root, Apple's marker extensions).
///
/// swift-certificates builds the chain and checks every signature and every RFC 5280 rule; this
/// type only chooses the policies and, when the check fails, names the failure with its own
/// ``AppStoreSecurityError/Code`` so that an expired certificate is never confused with a forged
/// one. The root that arrives with the data is never trusted; only the roots given here are.
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
    ) async throws(AppStoreSecurityError) -> ValidatedChain {
        let chainPolicy = AppStoreChainPolicy(requiresMarkerOIDs: requiresMarkerOIDs)
        var verifier = Verifier(rootCertificates: CertificateStore(roots)) {
            RFC5280Policy(fixedExpiryValidationTime: time)
            chainPolicy
        }
        let result = await verifier.validate(leaf: leaf, intermediates: CertificateStore([intermediate]))
        switch result {
        case .validCertificate(let chain):
            let certificates = Array(chain)
            guard certificates.count == 3, let root = certificates.last else {
                throw AppStoreSecurityError(.untrustedChain, "the verified chain is not leaf, intermediate and root")
            }
            return ValidatedChain(
                root: root,
                validFrom: certificates.map(\.notValidBefore).max() ?? time,
                validUntil: certificates.map(\.notValidAfter).min() ?? time)
        case .couldNotValidate(let failures):
            throw diagnose(leaf: leaf, intermediate: intermediate, at: time, failures: failures, policy: chainPolicy)
        }
    }

    /// Names a failure the `Verifier` reported. With no candidate chain, no trusted root signed the
    /// intermediate or the intermediate did not sign the leaf; with candidates, the first that
    /// reached a root failed a policy: the chain policy says which rule, and the RFC 5280 policy's
    /// validity rule is told apart from its other rules by the certificates' dates.
    private func diagnose(
        leaf: Certificate, intermediate: Certificate, at time: Date,
        failures: [CertificateValidationResult.PolicyFailure], policy: AppStoreChainPolicy
    ) -> AppStoreSecurityError {
        guard let failure = failures.first else {
            if roots.contains(where: { $0.subject == intermediate.issuer }) == false {
                return AppStoreSecurityError(
                    .untrustedChain, "the intermediate was not issued by any trusted root",
                    expected: roots.map { "\($0.subject)" }.joined(separator: " | "), found: "\(intermediate.issuer)")
            }
            if leaf.issuer != intermediate.subject {
                return AppStoreSecurityError(
                    .untrustedChain, "the leaf was not issued by the intermediate",
                    expected: "\(intermediate.subject)", found: "\(leaf.issuer)")
            }
            return AppStoreSecurityError(
                .untrustedChain,
                "no chain to a trusted root verifies: a signature does not match its issuer's key, or a certificate has a critical extension the verifier does not understand"
            )
        }
        let chain = Array(failure.chain)
        if let error = policy.violation(in: chain) { return error }
        let names = ["leaf", "intermediate", "root"]
        for (index, certificate) in chain.enumerated() {
            let name = index < names.count ? names[index] : "certificate \(index)"
            let window = "\(iso8601(certificate.notValidBefore)) to \(iso8601(certificate.notValidAfter))"
            if time > certificate.notValidAfter {
                return AppStoreSecurityError(
                    .certificateExpired, "the \(name) certificate (\(certificate.subject)) had expired",
                    expected: "a time within \(window)", found: iso8601(time))
            }
            if time < certificate.notValidBefore {
                return AppStoreSecurityError(
                    .certificateNotYetValid, "the \(name) certificate (\(certificate.subject)) was not yet valid",
                    expected: "a time within \(window)", found: iso8601(time))
            }
        }
        return AppStoreSecurityError(
            .untrustedChain, "the chain breaks RFC 5280: \(failure.policyFailureReason)")
    }
}

/// Apple's rules on top of RFC 5280, as a swift-certificates policy: the chain is exactly leaf,
/// intermediate and a trusted root; the intermediate is a CA allowed to sign certificates; the
/// leaf carries 1.2.840.113635.100.6.11.1 and the intermediate 1.2.840.113635.100.6.2.1.
public struct AppStoreChainPolicy: VerifierPolicy, Sendable {
    /// Apple's marker extensions are understood (their presence is what this policy checks).
    public let verifyingCriticalExtensions: [ASN1ObjectIdentifier] = [
        .AppleMarker.receiptSigner, .AppleMarker.wwdrIntermediate,
    ]
    /// Whether the marker extensions are required.
    public let requiresMarkerOIDs: Bool

    /// Creates the policy; without `requiresMarkerOIDs` it checks only the chain's length and the
    /// intermediate's right to sign certificates.
    public init(requiresMarkerOIDs: Bool = true) {
        self.requiresMarkerOIDs = requiresMarkerOIDs
    }

    public func chainMeetsPolicyRequirements(chain: UnverifiedCertificateChain) -> PolicyEvaluationResult {
        if let error = violation(in: Array(chain)) { return .failsToMeetPolicy(reason: "\(error)") }
        return .meetsPolicy
    }

    /// The rule `chain` breaks, as the typed error the verifier reports; `nil` when it breaks none.
    func violation(in chain: [Certificate]) -> AppStoreSecurityError? {
        guard chain.count == 3 else {
            return AppStoreSecurityError(
                .invalidChainLength, "an App Store chain is leaf, intermediate and root",
                expected: "3 certificates", found: "\(chain.count)")
        }
        let (leaf, intermediate) = (chain[0], chain[1])
        let constraints: BasicConstraints?
        do { constraints = try intermediate.extensions.basicConstraints } catch {
            return AppStoreSecurityError(.untrustedChain, "the intermediate's basic constraints cannot be read")
        }
        guard case .isCertificateAuthority = constraints else {
            return AppStoreSecurityError(
                .untrustedChain, "the intermediate is not a certificate authority",
                expected: "basicConstraints CA:TRUE", found: constraints.map { "\($0)" } ?? "no basicConstraints")
        }
        if let usage = try? intermediate.extensions.keyUsage, !usage.keyCertSign {
            return AppStoreSecurityError(
                .untrustedChain, "the intermediate may not sign certificates", expected: "keyCertSign",
                found: "\(usage)")
        }
        guard requiresMarkerOIDs else { return nil }
        for (oid, certificate, name) in [
            (ASN1ObjectIdentifier.AppleMarker.receiptSigner, leaf, "leaf"),
            (.AppleMarker.wwdrIntermediate, intermediate, "intermediate"),
        ] where certificate.extensions[oid: oid] == nil {
            return AppStoreSecurityError(
                .missingMarkerOID, "the \(name) certificate lacks Apple's marker extension",
                expected: "\(oid)", found: "no such extension in \(certificate.subject)")
        }
        return nil
    }
}

func iso8601(_ date: Date) -> String {
    date.formatted(.iso8601)
}

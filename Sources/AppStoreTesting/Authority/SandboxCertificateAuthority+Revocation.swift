import AppStoreSecurity
public import Crypto
public import Foundation
public import X509

extension SandboxCertificateAuthority {
    /// The certificates of an authority that can be revoked and replaced. The root never is: it is
    /// what verifiers trust, so it stays for the authority's whole life.
    public enum CertificateKind: String, Sendable, Hashable, CaseIterable, Codable {
        /// The intermediate (Apple's WWDR certification authority).
        case intermediate
        /// The leaf that signs JWS and receipts.
        case leaf
    }

    /// An intermediate or a leaf the authority issued and no longer signs with.
    public struct RetiredCertificate: Sendable {
        /// Which certificate it was.
        public var kind: CertificateKind
        /// The certificate.
        public var certificate: Certificate
        /// The certificate that issued it (the root for an intermediate, an intermediate for a leaf).
        public var issuer: Certificate
        /// When it was revoked; `nil` when it was only replaced (for a new OCSP URL), so it stays good.
        public var revocationDate: Date?
        /// A retired intermediate's private key, kept so that the responder can still sign answers
        /// about the leaves it issued; `nil` for leaves.
        public var key: P384.Signing.PrivateKey?

        /// Creates a record.
        public init(
            kind: CertificateKind, certificate: Certificate, issuer: Certificate, revocationDate: Date?,
            key: P384.Signing.PrivateKey? = nil
        ) {
            self.kind = kind
            self.certificate = certificate
            self.issuer = issuer
            self.revocationDate = revocationDate
            self.key = key
        }

        /// Whether it was revoked.
        public var isRevoked: Bool { revocationDate != nil }
    }

    /// The retired certificates that were revoked, oldest first.
    public var revokedCertificates: [RetiredCertificate] { retired.filter(\.isRevoked) }

    /// Revokes a certificate and replaces it, as the App Store does when a signing key must go.
    ///
    /// - `.leaf`: the leaf is revoked at `date`; a new leaf is issued by the same intermediate.
    /// - `.intermediate`: the intermediate and its leaf are revoked at `date`; a new intermediate
    ///   is issued by the same root, and a new leaf by it.
    ///
    /// The root never changes, so verifiers that trust it go on trusting what is signed next. New
    /// certificates name this authority's ``ocspURL``, are valid from `notValidBefore` (by
    /// default a day before `date`, for clock skew), and live as long as the ones they replace (a
    /// leaf never outlives its intermediate). The revoked certificates are kept in ``retired``, a
    /// retired intermediate with its key, so the responder still signs `revoked` answers about
    /// them.
    public func revoking(
        _ kind: CertificateKind, at date: Date = Date(), notValidBefore: Date? = nil
    ) throws -> SandboxCertificateAuthority {
        try replacing(
            intermediate: kind == .intermediate, revocationDate: date, ocspURL: ocspURL,
            start: notValidBefore ?? date.addingTimeInterval(-86_400))
    }

    /// A copy whose intermediate and leaf name `ocspURL` as their OCSP responder: new ones are
    /// issued by the same root, valid from `notValidBefore` (by default a day before `date`), and
    /// the old ones are retired without being revoked (the responder answers `good` for them).
    /// Returns `self` when both already name it.
    public func reissuing(
        ocspURL: String?, at date: Date = Date(), notValidBefore: Date? = nil
    ) throws -> SandboxCertificateAuthority {
        if Self.ocspResponderURL(of: intermediate) == ocspURL, Self.ocspResponderURL(of: leaf) == ocspURL {
            guard self.ocspURL != ocspURL else { return self }
            return SandboxCertificateAuthority(
                root: root, rootKey: rootKey, intermediate: intermediate, intermediateKey: intermediateKey,
                leaf: leaf, leafKey: leafKey, ocspURL: ocspURL, retired: retired)
        }
        return try replacing(
            intermediate: true, revocationDate: nil, ocspURL: ocspURL,
            start: notValidBefore ?? date.addingTimeInterval(-86_400))
    }

    /// Retires the leaf (and the intermediate when asked) and issues their successors.
    private func replacing(
        intermediate replaceIntermediate: Bool, revocationDate: Date?, ocspURL: String?, start: Date
    ) throws -> SandboxCertificateAuthority {
        // OCSP and the files keep whole seconds; so does the record, so it reads back the same.
        let revocationDate = revocationDate.map { Date(timeIntervalSince1970: $0.timeIntervalSince1970.rounded(.down)) }
        var retired = self.retired
        var newIntermediate = intermediate
        var newIntermediateKey = intermediateKey
        if replaceIntermediate {
            retired.append(
                RetiredCertificate(
                    kind: .intermediate, certificate: intermediate, issuer: root, revocationDate: revocationDate,
                    key: intermediateKey))
            newIntermediateKey = P384.Signing.PrivateKey()
            newIntermediate = try Self.issueIntermediate(
                name: organisation, publicKey: Certificate.PublicKey(newIntermediateKey.publicKey), root: root,
                rootKey: rootKey, notValidBefore: start, notValidAfter: max(intermediate.notValidAfter, start),
                ocspURL: ocspURL)
        }
        retired.append(
            RetiredCertificate(kind: .leaf, certificate: leaf, issuer: intermediate, revocationDate: revocationDate))
        let leafLifetime = max(leaf.notValidAfter.timeIntervalSince(leaf.notValidBefore), 86_400)
        let newLeafKey = P256.Signing.PrivateKey()
        let newLeaf = try Self.issueLeaf(
            name: organisation, publicKey: newLeafKey.publicKey, intermediate: newIntermediate,
            intermediateKey: newIntermediateKey, notValidBefore: start,
            notValidAfter: min(start.addingTimeInterval(leafLifetime), newIntermediate.notValidAfter),
            ocspURL: ocspURL)
        return SandboxCertificateAuthority(
            root: root, rootKey: rootKey, intermediate: newIntermediate, intermediateKey: newIntermediateKey,
            leaf: newLeaf, leafKey: newLeafKey, ocspURL: ocspURL, retired: retired)
    }
}

extension SandboxCertificateAuthority {
    /// A certificate that can sign OCSP answers about the certificates it issued, with its key.
    struct OCSPIssuer {
        var certificate: Certificate
        var key: Certificate.PrivateKey
    }

    /// Every certificate that issued others, newest first: the current intermediate, the root,
    /// then the retired intermediates.
    var ocspIssuers: [OCSPIssuer] {
        var issuers = [
            OCSPIssuer(certificate: intermediate, key: Certificate.PrivateKey(intermediateKey)),
            OCSPIssuer(certificate: root, key: Certificate.PrivateKey(rootKey)),
        ]
        for record in retired.reversed() where record.kind == .intermediate {
            if let key = record.key {
                issuers.append(OCSPIssuer(certificate: record.certificate, key: Certificate.PrivateKey(key)))
            }
        }
        return issuers
    }

    /// Every intermediate and leaf the authority issued, current and retired, with its issuer and
    /// its revocation date.
    var issuedCertificates: [(certificate: Certificate, issuer: Certificate, revocationDate: Date?)] {
        [(intermediate, root, nil), (leaf, intermediate, nil)]
            + retired.map { ($0.certificate, $0.issuer, $0.revocationDate) }
    }
}

import AppStoreSecurity
import Crypto
public import Foundation
import SwiftASN1
public import X509

/// A certificate authority shaped like Apple's, for the sandbox App Store and for tests.
///
/// It mirrors the App Store's chain: a P-384 root, a P-384 intermediate with Apple's WWDR marker
/// (1.2.840.113635.100.6.2.1), and a P-256 leaf with the receipt-signer marker
/// (1.2.840.113635.100.6.11.1). Key identifiers, basic constraints and key usages follow RFC 5280,
/// so strict X.509 verifiers (OpenSSL's `X509_STRICT`, which Apple's Python library sets) accept
/// it, and Apple's own `SignedDataVerifier` accepts what it signs once given ``root`` as a root.
public struct SandboxCertificateAuthority: Sendable {
    /// The self-signed root. Give it to verifiers as a trusted root.
    public let root: Certificate
    /// The root's private key.
    public let rootKey: P384.Signing.PrivateKey
    /// The intermediate, issued by the root.
    public let intermediate: Certificate
    /// The intermediate's private key.
    public let intermediateKey: P384.Signing.PrivateKey
    /// The leaf that signs JWS and receipts, issued by the intermediate.
    public let leaf: Certificate
    /// The leaf's private key (ES256).
    public let leafKey: P256.Signing.PrivateKey
    /// The OCSP responder named in the Authority Information Access extension of the
    /// intermediates and leaves this authority issues (never in the root); `nil` for none.
    ///
    /// Rotations (``revoking(_:at:notValidBefore:)``) issue their new certificates with it.
    public let ocspURL: String?
    /// Intermediates and leaves this authority issued and no longer signs with, oldest first:
    /// revoked ones, and those replaced when the OCSP URL changed. The responder still answers
    /// for them.
    public let retired: [RetiredCertificate]

    /// Assembles an authority from existing parts.
    public init(
        root: Certificate, rootKey: P384.Signing.PrivateKey,
        intermediate: Certificate, intermediateKey: P384.Signing.PrivateKey,
        leaf: Certificate, leafKey: P256.Signing.PrivateKey,
        ocspURL: String? = nil, retired: [RetiredCertificate] = []
    ) {
        self.root = root
        self.rootKey = rootKey
        self.intermediate = intermediate
        self.intermediateKey = intermediateKey
        self.leaf = leaf
        self.leafKey = leafKey
        self.ocspURL = ocspURL
        self.retired = retired
    }

    /// The identity that signs JWS and receipts: the leaf key and the three certificates.
    public var signingIdentity: SigningIdentity {
        SigningIdentity(privateKey: leafKey, chain: [leaf, intermediate, root])
    }

    /// Makes a new root, intermediate and leaf.
    ///
    /// - Parameters:
    ///   - name: the organisation written in every subject, e.g. "Kakin Sandbox".
    ///   - now: the start of validity (backdated by a day, to tolerate clock skew).
    ///   - rootLifetime: how long the root and the intermediate stay valid (years).
    ///   - leafLifetime: how long the leaf stays valid (Apple rotates its leaf about every two years).
    ///   - ocspURL: the OCSP responder written into the intermediate and the leaf (never into the
    ///     root), as Apple's certificates name theirs; `nil` writes none.
    public static func generate(
        name: String = "Kakin Sandbox",
        now: Date = Date(),
        rootLifetime: TimeInterval = 25 * 365 * 86_400,
        leafLifetime: TimeInterval = 5 * 365 * 86_400,
        ocspURL: String? = nil
    ) throws -> SandboxCertificateAuthority {
        let start = now.addingTimeInterval(-86_400)
        let rootKey = P384.Signing.PrivateKey()
        let rootName = try DistinguishedName {
            CountryName("US")
            OrganizationName(name)
            OrganizationalUnitName("Kakin Certification Authority")
            CommonName("\(name) Root CA")
        }
        let rootPublic = Certificate.PublicKey(rootKey.publicKey)
        let root = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(),
            publicKey: rootPublic,
            notValidBefore: start, notValidAfter: start.addingTimeInterval(rootLifetime),
            issuer: rootName, subject: rootName,
            signatureAlgorithm: .ecdsaWithSHA384,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                SubjectKeyIdentifier(hash: rootPublic)
            },
            issuerPrivateKey: Certificate.PrivateKey(rootKey)
        )
        let intermediateKey = P384.Signing.PrivateKey()
        let intermediate = try issueIntermediate(
            name: name, publicKey: Certificate.PublicKey(intermediateKey.publicKey),
            root: root, rootKey: rootKey,
            notValidBefore: start, notValidAfter: start.addingTimeInterval(rootLifetime - 86_400), ocspURL: ocspURL)
        let leafKey = P256.Signing.PrivateKey()
        let leaf = try issueLeaf(
            name: name, publicKey: leafKey.publicKey, intermediate: intermediate, intermediateKey: intermediateKey,
            notValidBefore: start, notValidAfter: start.addingTimeInterval(leafLifetime), ocspURL: ocspURL)
        return SandboxCertificateAuthority(
            root: root, rootKey: rootKey, intermediate: intermediate, intermediateKey: intermediateKey,
            leaf: leaf, leafKey: leafKey, ocspURL: ocspURL)
    }

    /// Issues an intermediate under `root`, with or without the WWDR marker extension, naming
    /// `ocspURL` as its OCSP responder when given.
    public static func issueIntermediate(
        name: String, publicKey: Certificate.PublicKey, root: Certificate, rootKey: P384.Signing.PrivateKey,
        notValidBefore: Date, notValidAfter: Date, includeMarker: Bool = true, ocspURL: String? = nil
    ) throws -> Certificate {
        let subject = try DistinguishedName {
            CountryName("US")
            OrganizationName(name)
            OrganizationalUnitName("G1")
            CommonName("\(name) Worldwide Developer Relations Certification Authority")
        }
        var extensions = try Certificate.Extensions {
            Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
            Critical(KeyUsage(keyCertSign: true, cRLSign: true))
            SubjectKeyIdentifier(hash: publicKey)
            AuthorityKeyIdentifier(keyIdentifier: try root.extensions.subjectKeyIdentifier?.keyIdentifier)
        }
        if includeMarker {
            try extensions.append(markerExtension(.AppleMarker.wwdrIntermediate))
        }
        if let ocspURL {
            try extensions.append(ocspExtension(ocspURL))
        }
        return try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: publicKey,
            notValidBefore: notValidBefore, notValidAfter: notValidAfter,
            issuer: root.subject, subject: subject, signatureAlgorithm: .ecdsaWithSHA384,
            extensions: extensions, issuerPrivateKey: Certificate.PrivateKey(rootKey))
    }

    /// Issues a signing leaf under `intermediate`, with or without the receipt-signer marker,
    /// naming `ocspURL` as its OCSP responder when given.
    ///
    /// Tests use this to make leaves that are expired, not yet valid, or unmarked.
    public static func issueLeaf(
        name: String, publicKey: P256.Signing.PublicKey, intermediate: Certificate,
        intermediateKey: P384.Signing.PrivateKey, notValidBefore: Date, notValidAfter: Date,
        includeMarker: Bool = true, ocspURL: String? = nil
    ) throws -> Certificate {
        let subject = try DistinguishedName {
            CountryName("US")
            OrganizationName(name)
            OrganizationalUnitName("Kakin Worldwide Developer Relations")
            CommonName("\(name) ECC App Store Receipt Signing")
        }
        let leafPublic = Certificate.PublicKey(publicKey)
        var extensions = try Certificate.Extensions {
            BasicConstraints.notCertificateAuthority
            Critical(KeyUsage(digitalSignature: true))
            SubjectKeyIdentifier(hash: leafPublic)
            AuthorityKeyIdentifier(keyIdentifier: try intermediate.extensions.subjectKeyIdentifier?.keyIdentifier)
        }
        if includeMarker {
            try extensions.append(markerExtension(.AppleMarker.receiptSigner))
        }
        if let ocspURL {
            try extensions.append(ocspExtension(ocspURL))
        }
        return try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: leafPublic,
            notValidBefore: notValidBefore, notValidAfter: notValidAfter,
            issuer: intermediate.subject, subject: subject, signatureAlgorithm: .ecdsaWithSHA384,
            extensions: extensions, issuerPrivateKey: Certificate.PrivateKey(intermediateKey))
    }

    /// Returns a copy whose leaf is replaced by a new one from this authority's intermediate.
    ///
    /// The old leaf is simply dropped (it is not retired). The new leaf names `ocspURL` as its
    /// OCSP responder, or the authority's own ``ocspURL`` when `nil`.
    public func reissuingLeaf(
        notValidBefore: Date, notValidAfter: Date, includeMarker: Bool = true, ocspURL: String? = nil
    ) throws -> SandboxCertificateAuthority {
        let key = P256.Signing.PrivateKey()
        let url = ocspURL ?? self.ocspURL
        let newLeaf = try Self.issueLeaf(
            name: organisation, publicKey: key.publicKey, intermediate: intermediate,
            intermediateKey: intermediateKey, notValidBefore: notValidBefore, notValidAfter: notValidAfter,
            includeMarker: includeMarker, ocspURL: url)
        return SandboxCertificateAuthority(
            root: root, rootKey: rootKey, intermediate: intermediate, intermediateKey: intermediateKey,
            leaf: newLeaf, leafKey: key, ocspURL: url, retired: retired)
    }

    /// The organisation written in the subjects, read back from the leaf.
    var organisation: String {
        leaf.subject.first(where: { $0.first?.type == .RDNAttributeType.organizationName })
            .flatMap { $0.first.map { String(describing: $0.value) } } ?? "Kakin Sandbox"
    }

    /// Apple's marker extensions are non-critical and hold a DER NULL (`05 00`).
    static func markerExtension(_ oid: ASN1ObjectIdentifier) -> Certificate.Extension {
        Certificate.Extension(oid: oid, critical: false, value: [0x05, 0x00])
    }

    /// A non-critical Authority Information Access extension with one OCSP access description.
    static func ocspExtension(_ url: String) throws -> Certificate.Extension {
        try Certificate.Extension(
            AuthorityInformationAccess([.init(method: .ocspServer, location: .uniformResourceIdentifier(url))]),
            critical: false)
    }

    /// The OCSP responder URL a certificate names in its Authority Information Access, if any.
    public static func ocspResponderURL(of certificate: Certificate) -> String? {
        guard let access = try? certificate.extensions.authorityInformationAccess else { return nil }
        return access.lazy.filter { $0.method == .ocspServer }.compactMap { description -> String? in
            guard case .uniformResourceIdentifier(let url) = description.location else { return nil }
            return url
        }.first
    }
}

import Crypto
import Foundation
import X509
import _CryptoExtras

/// Checks a CMS signer's signature with a certificate's public key.
///
/// RSA signatures are PKCS#1 v1.5 with the hash named by the digest algorithm (real receipts name
/// only `rsaEncryption` as signature algorithm, so the digest algorithm decides, as in Apple's
/// verifier). ECDSA signatures are DER `ECDSA-Sig-Value`s over the same hash. With signed
/// attributes, the `messageDigest` attribute must equal the content's hash and the signature
/// covers the attributes' DER.
enum CMSSignatureCheck {
    /// The hash functions a signer may name.
    enum DigestKind {
        case sha1, sha256, sha384, sha512

        init(_ algorithm: CMSAlgorithmIdentifier) throws(AppStoreSecurityError) {
            switch algorithm.algorithm {
            case CMSAlgorithmIdentifier.sha1.algorithm: self = .sha1
            case CMSAlgorithmIdentifier.sha256.algorithm: self = .sha256
            case CMSAlgorithmIdentifier.sha384.algorithm: self = .sha384
            case CMSAlgorithmIdentifier.sha512.algorithm: self = .sha512
            default:
                throw AppStoreSecurityError(
                    .wrongAlgorithm, "the receipt names a digest algorithm this verifier does not support",
                    expected: "SHA-1 or SHA-256", found: "\(algorithm)")
            }
        }

        func hash(_ bytes: [UInt8]) -> [UInt8] {
            switch self {
            case .sha1: Array(Insecure.SHA1.hash(data: bytes))
            case .sha256: Array(SHA256.hash(data: bytes))
            case .sha384: Array(SHA384.hash(data: bytes))
            case .sha512: Array(SHA512.hash(data: bytes))
            }
        }

        /// The RSA signature algorithms that name this hash.
        var rsaSignatureAlgorithms: [CMSAlgorithmIdentifier] {
            switch self {
            case .sha1: [.sha1WithRSAEncryption]
            case .sha256: [.sha256WithRSAEncryption]
            case .sha384: [.sha384WithRSAEncryption]
            case .sha512: [.sha512WithRSAEncryption]
            }
        }

        /// The ECDSA signature algorithms that name this hash.
        var ecdsaSignatureAlgorithms: [CMSAlgorithmIdentifier] {
            switch self {
            case .sha256: [.ecdsaWithSHA256]
            case .sha384: [.ecdsaWithSHA384]
            case .sha1, .sha512: []
            }
        }

        /// Calls `body` with the digest of `bytes` as a typed Crypto digest.
        func withDigest(of bytes: [UInt8], _ body: (any Digest) -> Bool) -> Bool {
            switch self {
            case .sha1: body(Insecure.SHA1.hash(data: bytes))
            case .sha256: body(SHA256.hash(data: bytes))
            case .sha384: body(SHA384.hash(data: bytes))
            case .sha512: body(SHA512.hash(data: bytes))
            }
        }
    }

    /// Verifies `signer`'s signature over `content` with `certificate`'s key.
    static func verify(
        _ signer: CMSSignerInfo, content: [UInt8], certificate: Certificate
    ) throws(AppStoreSecurityError) {
        let digest = try DigestKind(signer.digestAlgorithm)
        var signedBytes = content
        if let attributesDER = signer.signedAttributesDER {
            guard let messageDigest = signer.messageDigest else {
                throw AppStoreSecurityError(
                    .malformedInput, "the signed attributes have no single messageDigest attribute")
            }
            guard messageDigest == digest.hash(content) else {
                throw AppStoreSecurityError(
                    .badSignature, "the messageDigest attribute does not match the hash of the receipt content")
            }
            signedBytes = attributesDER
        }

        let algorithm = signer.signatureAlgorithm
        let valid: Bool
        if let key = _RSA.Signing.PublicKey(certificate.publicKey) {
            try requireAlgorithm(algorithm, in: [.rsaEncryption] + digest.rsaSignatureAlgorithms, key: "RSA")
            let signature = _RSA.Signing.RSASignature(rawRepresentation: signer.signature)
            valid = digest.withDigest(of: signedBytes) { hash in
                key.isValidSignature(signature, for: hash, padding: .insecurePKCS1v1_5)
            }
        } else if P256.Signing.PublicKey(certificate.publicKey) != nil || P384.Signing.PublicKey(certificate.publicKey) != nil {
            try requireAlgorithm(
                algorithm, in: [.ecPublicKey] + digest.ecdsaSignatureAlgorithms,
                key: P256.Signing.PublicKey(certificate.publicKey) != nil ? "P-256" : "P-384")
            valid = try isValidECDSA(signer.signature, over: signedBytes, digest: digest, key: certificate.publicKey)
        } else {
            throw AppStoreSecurityError(
                .wrongAlgorithm, "the signing certificate's key is neither RSA nor ECDSA P-256/P-384",
                found: "\(certificate.publicKey)")
        }
        guard valid else {
            throw AppStoreSecurityError(
                .badSignature, "the receipt's signature does not verify with the signing certificate's key")
        }
    }

    /// The one ECDSA check of receipts: `signature` is a DER `ECDSA-Sig-Value` over `bytes` hashed
    /// with `digest`, and swift-crypto decides it with a P-256 or P-384 `key`. The Wycheproof tests
    /// run their DER vectors through exactly this function.
    static func isValidECDSA(
        _ signature: [UInt8], over bytes: [UInt8], digest: DigestKind, key: Certificate.PublicKey
    ) throws(AppStoreSecurityError) -> Bool {
        if let key = P256.Signing.PublicKey(key) {
            guard let parsed = try? P256.Signing.ECDSASignature(derRepresentation: signature) else {
                throw AppStoreSecurityError(.badSignature, "the signature is not a DER ECDSA signature")
            }
            return digest.withDigest(of: bytes) { key.isValidSignature(parsed, for: $0) }
        }
        if let key = P384.Signing.PublicKey(key) {
            guard let parsed = try? P384.Signing.ECDSASignature(derRepresentation: signature) else {
                throw AppStoreSecurityError(.badSignature, "the signature is not a DER ECDSA signature")
            }
            return digest.withDigest(of: bytes) { key.isValidSignature(parsed, for: $0) }
        }
        throw AppStoreSecurityError(.wrongAlgorithm, "the key is not ECDSA P-256 or P-384", found: "\(key)")
    }

    private static func requireAlgorithm(
        _ algorithm: CMSAlgorithmIdentifier, in allowed: [CMSAlgorithmIdentifier], key: String
    ) throws(AppStoreSecurityError) {
        guard allowed.contains(where: { $0.sameAlgorithm(as: algorithm) }) else {
            throw AppStoreSecurityError(
                .wrongAlgorithm, "the signature algorithm does not fit the \(key) key and the digest algorithm",
                expected: allowed.map(\.description).joined(separator: " or "), found: "\(algorithm)")
        }
    }
}

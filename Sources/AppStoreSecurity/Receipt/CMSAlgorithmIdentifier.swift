public import SwiftASN1

/// An `AlgorithmIdentifier` as CMS uses it for digest and signature algorithms.
///
/// `AlgorithmIdentifier ::= SEQUENCE { algorithm OBJECT IDENTIFIER, parameters ANY OPTIONAL }`.
/// Parameters are kept as found (Apple writes an explicit NULL for SHA-256), so a parsed value
/// serializes back unchanged.
public struct CMSAlgorithmIdentifier: Hashable, Sendable, DERSerializable, CustomStringConvertible {
    /// The algorithm's object identifier.
    public var algorithm: ASN1ObjectIdentifier
    /// The parameters, if any.
    public var parameters: ASN1Any?

    /// Creates an identifier.
    public init(algorithm: ASN1ObjectIdentifier, parameters: ASN1Any? = nil) {
        self.algorithm = algorithm
        self.parameters = parameters
    }

    /// SHA-1 (1.3.14.3.2.26): the digest of older App Store receipts.
    public static let sha1 = Self(algorithm: [1, 3, 14, 3, 2, 26])
    /// SHA-256 (2.16.840.1.101.3.4.2.1): the digest of newer and Xcode receipts, and of ours.
    public static let sha256 = Self(algorithm: [2, 16, 840, 1, 101, 3, 4, 2, 1])
    /// SHA-384 (2.16.840.1.101.3.4.2.2).
    public static let sha384 = Self(algorithm: [2, 16, 840, 1, 101, 3, 4, 2, 2])
    /// SHA-512 (2.16.840.1.101.3.4.2.3).
    public static let sha512 = Self(algorithm: [2, 16, 840, 1, 101, 3, 4, 2, 3])
    /// Bare `rsaEncryption` (1.2.840.113549.1.1.1): what real receipts name as signature algorithm;
    /// the hash then comes from the digest algorithm.
    public static let rsaEncryption = Self(algorithm: [1, 2, 840, 113_549, 1, 1, 1])
    /// `sha1WithRSAEncryption` (1.2.840.113549.1.1.5).
    public static let sha1WithRSAEncryption = Self(algorithm: [1, 2, 840, 113_549, 1, 1, 5])
    /// `sha256WithRSAEncryption` (1.2.840.113549.1.1.11): what Xcode writes.
    public static let sha256WithRSAEncryption = Self(algorithm: [1, 2, 840, 113_549, 1, 1, 11])
    /// `sha384WithRSAEncryption` (1.2.840.113549.1.1.12).
    public static let sha384WithRSAEncryption = Self(algorithm: [1, 2, 840, 113_549, 1, 1, 12])
    /// `sha512WithRSAEncryption` (1.2.840.113549.1.1.13).
    public static let sha512WithRSAEncryption = Self(algorithm: [1, 2, 840, 113_549, 1, 1, 13])
    /// `ecdsa-with-SHA256` (1.2.840.10045.4.3.2): what Kakin's receipts use.
    public static let ecdsaWithSHA256 = Self(algorithm: [1, 2, 840, 10045, 4, 3, 2])
    /// `ecdsa-with-SHA384` (1.2.840.10045.4.3.3).
    public static let ecdsaWithSHA384 = Self(algorithm: [1, 2, 840, 10045, 4, 3, 3])
    /// `id-ecPublicKey` (1.2.840.10045.2.1), which some signers write instead of an ECDSA signature algorithm.
    public static let ecPublicKey = Self(algorithm: [1, 2, 840, 10045, 2, 1])

    /// Whether both name the same algorithm, whatever their parameters (absent or NULL).
    public func sameAlgorithm(as other: Self) -> Bool {
        algorithm == other.algorithm
    }

    /// The dotted object identifier.
    public var description: String { "\(algorithm)" }

    /// Reads an identifier from a BER or DER node.
    init(berNode node: ASN1Node) throws {
        self = try BER.sequence(node, identifier: .sequence) { nodes in
            let algorithm = try ASN1ObjectIdentifier(berEncoded: &nodes)
            let parameters = nodes.next().map { ASN1Any(berEncoded: $0) }
            guard nodes.next() == nil else {
                throw ASN1Error.invalidASN1Object(reason: "an AlgorithmIdentifier has at most two fields")
            }
            return CMSAlgorithmIdentifier(algorithm: algorithm, parameters: parameters)
        }
    }

    /// Writes the identifier as DER.
    public func serialize(into coder: inout DER.Serializer) throws {
        try coder.appendConstructedNode(identifier: .sequence) { coder in
            try coder.serialize(algorithm)
            if let parameters {
                try coder.serialize(parameters)
            }
        }
    }
}

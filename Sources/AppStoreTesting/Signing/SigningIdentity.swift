import AppStoreSecurity
public import Crypto
public import X509

/// A private key and the certificate chain that vouches for it: what a JWS signer or a receipt
/// signer needs.
public struct SigningIdentity: Sendable {
    /// The ES256 signing key; its public half is in `chain[0]`.
    public let privateKey: P256.Signing.PrivateKey
    /// Leaf first, then intermediate, then root, as Apple orders `x5c`.
    public let chain: [Certificate]

    /// Creates an identity. The chain is written into every signature as given.
    public init(privateKey: P256.Signing.PrivateKey, chain: [Certificate]) {
        self.privateKey = privateKey
        self.chain = chain
    }
}

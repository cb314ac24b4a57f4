public import AppStoreSecurity
public import AppStoreModels
import Crypto
public import Foundation
import X509

/// Makes app receipts the way the App Store does, signed by a Kakin certificate authority.
///
/// The result is a DER PKCS#7 SignedData: the payload as `pkcs7-data` content, the identity's
/// certificates (leaf, intermediate, root), and one signer named by issuer and serial number,
/// with digest SHA-256, signature `ecdsa-with-SHA256` over the payload itself, and no signed
/// attributes, like Apple's receipts. AppStoreSecurity's `SignedAppReceipt` parses it back to an
/// equal `AppReceipt`, and it verifies against the authority's root.
public struct AppReceiptSigner: Sendable {
    /// The leaf key and the certificates written into every receipt.
    public let identity: SigningIdentity

    /// Creates a signer; `identity.chain` must start with the certificate of `identity.privateKey`.
    public init(identity: SigningIdentity) {
        self.identity = identity
    }

    /// Signs `receipt` and returns the DER bytes.
    ///
    /// - Parameter deviceIdentifier: when given, the receipt's SHA-1 hash is first set for this
    ///   device (see `AppReceipt.setDeviceHash(for:)`), as the store does for the device that
    ///   asked for the receipt.
    /// - Throws: `AppStoreSecurityError.Code.invalidConfiguration` when the identity has no
    ///   certificate or cannot sign.
    public func sign(_ receipt: AppReceipt, deviceIdentifier: Data? = nil) throws(AppStoreSecurityError) -> [UInt8] {
        do {
            return try signedData(for: receipt, deviceIdentifier: deviceIdentifier).serializedDER()
        } catch let error as AppStoreSecurityError {
            throw error
        } catch {
            throw AppStoreSecurityError(.invalidConfiguration, "the receipt could not be encoded: \(error)")
        }
    }

    /// Signs `receipt` and returns the DER as base64, the form apps send to servers.
    public func signBase64(
        _ receipt: AppReceipt, deviceIdentifier: Data? = nil
    ) throws(AppStoreSecurityError)
        -> String
    {
        Data(try sign(receipt, deviceIdentifier: deviceIdentifier)).base64EncodedString()
    }

    /// The SignedData that ``sign(_:deviceIdentifier:)`` serializes.
    public func signedData(
        for receipt: AppReceipt, deviceIdentifier: Data? = nil
    ) throws(AppStoreSecurityError)
        -> CMSSignedData
    {
        guard let leaf = identity.chain.first else {
            throw AppStoreSecurityError(.invalidConfiguration, "the signing identity has no certificate")
        }
        guard leaf.publicKey == Certificate.PublicKey(identity.privateKey.publicKey) else {
            throw AppStoreSecurityError(
                .invalidConfiguration, "the first certificate of the signing identity is not the signing key's")
        }
        var receipt = receipt
        if let deviceIdentifier {
            receipt.setDeviceHash(for: deviceIdentifier)
        }
        let payload = receipt.serializedPayload()
        let signature: P256.Signing.ECDSASignature
        do { signature = try identity.privateKey.signature(for: SHA256.hash(data: payload)) } catch {
            throw AppStoreSecurityError(.invalidConfiguration, "the signing key could not sign: \(error)")
        }
        let signer = CMSSignerInfo(
            version: 1, signerIdentifier: CMSSignerIdentifier(issuerAndSerialNumberOf: leaf),
            digestAlgorithm: .sha256, signatureAlgorithm: .ecdsaWithSHA256,
            signature: Array(signature.derRepresentation))
        return CMSSignedData(
            version: 1, digestAlgorithms: [.sha256], contentType: CMSSignedData.dataOID, content: payload,
            certificates: identity.chain, signerInfos: [signer])
    }
}

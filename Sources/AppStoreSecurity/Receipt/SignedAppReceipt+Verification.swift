public import AppStoreModels
public import Foundation
public import X509

extension SignedAppReceipt {
    /// Verifies the receipt: certificates, signature, and optionally app, environment and device.
    ///
    /// In order:
    /// 1. The signer's certificate must be embedded. App Store receipts carry three certificates
    ///    (leaf, intermediate, root); the leaf and intermediate must chain to one of `roots`
    ///    (never to the root inside the receipt), be valid at the validation time and carry
    ///    Apple's marker extensions, checked by ``CertificateChainVerifier``; with a `revocation`
    ///    check on, they are checked at the current time and with OCSP instead. A receipt with a
    ///    single self-signed certificate is how Xcode signs: it is accepted only when
    ///    `trustsXcodeSigning` is set, and then only its signature is checked.
    /// 2. The signature must verify with the leaf's key (RSA PKCS#1 v1.5 or ECDSA, with the digest
    ///    algorithm's hash, over the content or over the signed attributes).
    /// 3. When given: the bundle ID, the environment (from the receipt type) and the device hash.
    ///
    /// - Parameters:
    ///   - roots: the trusted roots; Apple Inc. Root (RSA) for real App Store receipts.
    ///   - time: check the certificates at this time; by default the receipt's creation date
    ///     (Apple's leaf certificates expire, and a receipt stays valid if they were valid when it
    ///     was made), or `now` when the receipt has none.
    ///   - trustsXcodeSigning: accept Xcode's single self-signed certificate.
    ///   - bundleID: the app's bundle ID; ``AppStoreSecurityError/Code/wrongBundleID`` otherwise.
    ///   - environment: the environment the receipt must be from; ``AppStoreSecurityError/Code/wrongEnvironment`` otherwise.
    ///   - deviceIdentifier: the device's identifier; ``AppStoreSecurityError/Code/deviceHashMismatch`` when the hash differs.
    ///   - revocation: the OCSP check of the leaf and the intermediate; `nil` checks none.
    ///   - now: the current time: the validation time with a revocation check on, otherwise used
    ///     only when there is neither `time` nor a creation date.
    public func verify(
        roots: [Certificate] = AppleRootCertificates.receiptRoots,
        at time: Date? = nil,
        trustsXcodeSigning: Bool = false,
        bundleID: String? = nil,
        environment: AppStoreEnvironment? = nil,
        deviceIdentifier: Data? = nil,
        revocation: RevocationChecker? = nil,
        now: Date = Date()
    ) async throws(AppStoreSecurityError) -> AppReceiptVerification {
        let checksRevocation = revocation.map { $0.mode != .off } ?? false
        let validationTime = time ?? (checksRevocation ? now : receipt.creationDate ?? now)
        guard let leaf = signerCertificate else {
            throw AppStoreSecurityError(
                .malformedInput, "no embedded certificate matches the receipt's signer",
                found: "\(certificates.count) certificates")
        }

        let trust: AppReceiptVerification.Trust
        if certificates.count == 1, trustsXcodeSigning {
            guard leaf.issuer == leaf.subject, leaf.publicKey.isValidSignature(leaf.signature, for: leaf) else {
                throw AppStoreSecurityError(
                    .untrustedChain, "a receipt with one certificate must be signed by a self-signed certificate",
                    found: "\(leaf.subject) issued by \(leaf.issuer)")
            }
            trust = .xcodeSelfSigned
        } else {
            guard certificates.count == 3 else {
                throw AppStoreSecurityError(
                    .invalidChainLength,
                    certificates.count == 1
                        ? "one self-signed certificate is how Xcode signs; trust Xcode signing to accept it"
                        : "App Store receipts carry leaf, intermediate and root",
                    expected: "3 certificates", found: "\(certificates.count)")
            }
            guard let intermediate = certificates.first(where: { $0 != leaf && $0.subject == leaf.issuer }) else {
                throw AppStoreSecurityError(
                    .untrustedChain, "the receipt does not carry the certificate that issued its signer",
                    expected: "\(leaf.issuer)")
            }
            let validated = try await CertificateChainVerifier(roots: roots)
                .verify(leaf: leaf, intermediate: intermediate, at: validationTime)
            if checksRevocation, let revocation {
                _ = try await revocation.check(leaf: leaf, intermediate: intermediate, root: validated.root)
            }
            trust = .certificateChain(root: validated.root)
        }

        try CMSSignatureCheck.verify(signerInfo, content: signedContent, certificate: leaf)

        if let bundleID, bundleID != receipt.bundleID {
            throw AppStoreSecurityError(
                .wrongBundleID, "the receipt is for another app", expected: bundleID, found: receipt.bundleID)
        }
        if let environment, receipt.receiptType?.environment != environment {
            throw AppStoreSecurityError(
                .wrongEnvironment, "the receipt is from another environment", expected: environment.rawValue,
                found: receipt.receiptType?.rawValue ?? "no receipt type")
        }
        if let deviceIdentifier {
            try receipt.verifyDeviceHash(for: deviceIdentifier)
        }
        return AppReceiptVerification(
            receipt: receipt, trust: trust, signerCertificate: leaf, validationTime: validationTime,
            digestAlgorithm: signerInfo.digestAlgorithm, deviceHashVerified: deviceIdentifier != nil)
    }
}

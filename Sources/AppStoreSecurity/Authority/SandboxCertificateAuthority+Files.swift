import Crypto
public import Foundation
import X509

extension SandboxCertificateAuthority {
    /// The files an authority is kept in, all PEM (keys as PKCS#8), plus `root.cer` in DER for
    /// tools that want the root the way Apple publishes its own.
    public enum FileName {
        public static let root = "root.pem"
        public static let rootDER = "root.cer"
        public static let rootKey = "root-key.pem"
        public static let intermediate = "intermediate.pem"
        public static let intermediateKey = "intermediate-key.pem"
        public static let leaf = "leaf.pem"
        public static let leafKey = "leaf-key.pem"
    }

    /// Writes the authority into `directory` (created if needed). Private keys are written with
    /// owner-only permissions.
    public func write(to directory: URL) throws {
        let manager = FileManager.default
        try manager.createDirectory(at: directory, withIntermediateDirectories: true)
        func put(_ text: String, _ name: String, secret: Bool = false) throws {
            let url = directory.appendingPathComponent(name)
            try Data(text.utf8).write(to: url, options: .atomic)
            if secret { try manager.setAttributes([.posixPermissions: 0o600], ofItemAtPath: url.path) }
        }
        try put(root.serializeAsPEM().pemString + "\n", FileName.root)
        try Data(root.derEncoded()).write(to: directory.appendingPathComponent(FileName.rootDER), options: .atomic)
        try put(rootKey.pemRepresentation + "\n", FileName.rootKey, secret: true)
        try put(intermediate.serializeAsPEM().pemString + "\n", FileName.intermediate)
        try put(intermediateKey.pemRepresentation + "\n", FileName.intermediateKey, secret: true)
        try put(leaf.serializeAsPEM().pemString + "\n", FileName.leaf)
        try put(leafKey.pemRepresentation + "\n", FileName.leafKey, secret: true)
    }

    /// Reads an authority written by ``write(to:)`` (or by `kakin ca create`).
    ///
    /// Fails with ``AppStoreSecurityError/Code/malformedInput`` naming the file that is missing or
    /// unreadable, and with ``AppStoreSecurityError/Code/invalidConfiguration`` when a key does not
    /// belong to its certificate.
    public static func load(from directory: URL) throws(AppStoreSecurityError) -> SandboxCertificateAuthority {
        func text(_ name: String) throws(AppStoreSecurityError) -> String {
            let url = directory.appendingPathComponent(name)
            guard let data = try? Data(contentsOf: url), let text = String(data: data, encoding: .utf8) else {
                throw AppStoreSecurityError(.malformedInput, "cannot read \(url.path)")
            }
            return text
        }
        func certificate(_ name: String) throws(AppStoreSecurityError) -> Certificate {
            do { return try Certificate(pemEncoded: try text(name)) } catch {
                throw AppStoreSecurityError(.malformedInput, "\(name) in \(directory.path) is not a PEM certificate")
            }
        }
        let root = try certificate(FileName.root)
        let intermediate = try certificate(FileName.intermediate)
        let leaf = try certificate(FileName.leaf)
        let rootKey: P384.Signing.PrivateKey
        let intermediateKey: P384.Signing.PrivateKey
        let leafKey: P256.Signing.PrivateKey
        do {
            rootKey = try P384.Signing.PrivateKey(pemRepresentation: try text(FileName.rootKey))
            intermediateKey = try P384.Signing.PrivateKey(pemRepresentation: try text(FileName.intermediateKey))
            leafKey = try P256.Signing.PrivateKey(pemRepresentation: try text(FileName.leafKey))
        } catch let error as AppStoreSecurityError {
            throw error
        } catch {
            throw AppStoreSecurityError(.malformedInput, "a private key in \(directory.path) cannot be read: \(error)")
        }
        guard root.publicKey == Certificate.PublicKey(rootKey.publicKey),
            intermediate.publicKey == Certificate.PublicKey(intermediateKey.publicKey),
            leaf.publicKey == Certificate.PublicKey(leafKey.publicKey)
        else {
            throw AppStoreSecurityError(
                .invalidConfiguration, "a private key in \(directory.path) does not match its certificate")
        }
        return SandboxCertificateAuthority(
            root: root, rootKey: rootKey, intermediate: intermediate, intermediateKey: intermediateKey,
            leaf: leaf, leafKey: leafKey)
    }
}

extension SandboxCertificateAuthority {
    /// The authority kept in `directory`, or a new one written there when it holds none: the
    /// sandbox's CA survives restarts and is made on first start.
    public static func loadOrCreate(in directory: URL) throws -> SandboxCertificateAuthority {
        if FileManager.default.fileExists(atPath: directory.appendingPathComponent(FileName.root).path) {
            return try load(from: directory)
        }
        let authority = try generate()
        try authority.write(to: directory)
        return authority
    }
}

public import AppStoreSecurity
import Crypto
public import Foundation
import KakinCore
public import X509

extension SandboxCertificateAuthority {
    /// The files an authority is kept in, all PEM (keys as PKCS#8), plus `root.cer` in DER for
    /// tools that want the root the way Apple publishes its own.
    public enum FileName {
        /// The root certificate, which the verifying side adds to its trusted roots.
        public static let root = "root.pem"
        /// The same root in DER.
        public static let rootDER = "root.cer"
        /// The root's private key.
        public static let rootKey = "root-key.pem"
        /// The intermediate certificate in use.
        public static let intermediate = "intermediate.pem"
        /// The intermediate's private key.
        public static let intermediateKey = "intermediate-key.pem"
        /// The signing leaf certificate in use.
        public static let leaf = "leaf.pem"
        /// The leaf's private key, which signs the JWS and the receipts.
        public static let leafKey = "leaf-key.pem"
        /// The retired certificates, their issuers and revocation dates (JSON).
        public static let retired = "retired.json"
        /// The key of a retired intermediate, named by its serial number in hex.
        public static func retiredKey(serialNumber: Certificate.SerialNumber) -> String {
            "retired-intermediate-\(serialNumber.bytes.map { String(format: "%02x", $0) }.joined())-key.pem"
        }
    }

    /// Writes the authority into `directory` (created if needed).
    ///
    /// Private keys are created with owner-only permissions (0600) from the first byte and
    /// replace the old file atomically. Retired certificates go to `retired.json`, with the keys
    /// of retired intermediates beside it, so that a restarted responder still answers
    /// `revoked` for them. The retired state and the new keys are written before the
    /// certificates that use them.
    public func write(to directory: URL) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        func put(_ text: String, _ name: String, secret: Bool = false) throws {
            let url = directory.appendingPathComponent(name)
            if secret {
                try OwnerOnlyFiles.write(Data(text.utf8), to: url)
            } else {
                try Data(text.utf8).write(to: url, options: .atomic)
            }
        }
        var entries: [RetiredFile.Entry] = []
        for record in retired {
            var keyFile: String?
            if let key = record.key {
                let name = FileName.retiredKey(serialNumber: record.certificate.serialNumber)
                try put(key.pemRepresentation + "\n", name, secret: true)
                keyFile = name
            }
            entries.append(
                RetiredFile.Entry(
                    kind: record.kind, certificate: try record.certificate.serializeAsPEM().pemString,
                    issuer: try record.issuer.serializeAsPEM().pemString, revocationDate: record.revocationDate,
                    keyFile: keyFile))
        }
        if !entries.isEmpty {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            encoder.dateEncodingStrategy = .iso8601
            try encoder.encode(RetiredFile(retired: entries)).write(
                to: directory.appendingPathComponent(FileName.retired), options: .atomic)
        }
        try put(rootKey.pemRepresentation + "\n", FileName.rootKey, secret: true)
        try put(root.serializeAsPEM().pemString + "\n", FileName.root)
        try Data(root.derEncoded()).write(to: directory.appendingPathComponent(FileName.rootDER), options: .atomic)
        try put(intermediateKey.pemRepresentation + "\n", FileName.intermediateKey, secret: true)
        try put(intermediate.serializeAsPEM().pemString + "\n", FileName.intermediate)
        try put(leafKey.pemRepresentation + "\n", FileName.leafKey, secret: true)
        try put(leaf.serializeAsPEM().pemString + "\n", FileName.leaf)
    }

    /// Reads an authority written by ``write(to:)`` (or by `kakin ca create`).
    ///
    /// The OCSP URL is read back from the leaf's Authority Information Access extension. A
    /// directory without `retired.json` (written before revocation existed) has no retired
    /// certificates.
    ///
    /// Fails with `AppStoreSecurityError.Code.malformedInput` naming the file that is missing or
    /// unreadable, and with `AppStoreSecurityError.Code.invalidConfiguration` when a key does not
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
            leaf: leaf, leafKey: leafKey, ocspURL: ocspResponderURL(of: leaf) ?? ocspResponderURL(of: intermediate),
            retired: try loadRetired(from: directory))
    }

    private static func loadRetired(from directory: URL) throws(AppStoreSecurityError) -> [RetiredCertificate] {
        let url = directory.appendingPathComponent(FileName.retired)
        guard FileManager.default.fileExists(atPath: url.path) else { return [] }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        let file: RetiredFile
        do { file = try decoder.decode(RetiredFile.self, from: Data(contentsOf: url)) } catch {
            throw AppStoreSecurityError(.malformedInput, "\(url.path) cannot be read: \(error)")
        }
        var records: [RetiredCertificate] = []
        for entry in file.retired {
            do {
                let certificate = try Certificate(pemEncoded: entry.certificate)
                let issuer = try Certificate(pemEncoded: entry.issuer)
                var key: P384.Signing.PrivateKey?
                if let keyFile = entry.keyFile {
                    let text = try String(contentsOf: directory.appendingPathComponent(keyFile), encoding: .utf8)
                    let loaded = try P384.Signing.PrivateKey(pemRepresentation: text)
                    guard certificate.publicKey == Certificate.PublicKey(loaded.publicKey) else {
                        throw AppStoreSecurityError(
                            .invalidConfiguration, "\(keyFile) in \(directory.path) does not match its certificate")
                    }
                    key = loaded
                }
                records.append(
                    RetiredCertificate(
                        kind: entry.kind, certificate: certificate, issuer: issuer,
                        revocationDate: entry.revocationDate, key: key))
            } catch let error as AppStoreSecurityError {
                throw error
            } catch {
                throw AppStoreSecurityError(
                    .malformedInput, "a retired certificate in \(url.path) cannot be read: \(error)")
            }
        }
        return records
    }
}

/// `retired.json`: the certificates an authority retired, in PEM.
private struct RetiredFile: Codable {
    struct Entry: Codable {
        var kind: SandboxCertificateAuthority.CertificateKind
        var certificate: String
        var issuer: String
        var revocationDate: Date?
        var keyFile: String?

        enum CodingKeys: String, CodingKey {
            case kind, certificate, issuer, revocationDate, keyFile
        }
    }

    var retired: [Entry]

    enum CodingKeys: String, CodingKey {
        case retired
    }
}

extension SandboxCertificateAuthority {
    /// The authority kept in `directory`, or a new one written there when it holds none: the
    /// sandbox's CA survives restarts and is made on first start.
    ///
    /// With an `ocspURL`, the intermediate and the leaf name it as their OCSP responder: a new
    /// authority is made with it, and a kept one whose intermediate or leaf names another URL (or
    /// none, as in a directory made before OCSP) gets a new intermediate and leaf with it, under
    /// the same root, written back to `directory`. `nil` keeps whatever the directory holds.
    public static func loadOrCreate(
        in directory: URL, ocspURL: String? = nil, now: Date = Date()
    ) throws -> SandboxCertificateAuthority {
        if FileManager.default.fileExists(atPath: directory.appendingPathComponent(FileName.root).path) {
            let authority = try load(from: directory)
            guard let ocspURL,
                ocspResponderURL(of: authority.intermediate) != ocspURL
                    || ocspResponderURL(of: authority.leaf) != ocspURL
            else { return authority }
            let reissued = try authority.reissuing(ocspURL: ocspURL, at: now)
            try reissued.write(to: directory)
            return reissued
        }
        let authority = try generate(now: now, ocspURL: ocspURL)
        try authority.write(to: directory)
        return authority
    }
}

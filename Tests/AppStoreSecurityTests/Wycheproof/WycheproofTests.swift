import Crypto
import Foundation
import Testing
import X509

@testable import AppStoreSecurity

/// Project Wycheproof's ECDSA vectors, run through the code Kakin uses for each signature form:
/// raw r‖s through the JWS check, DER through the receipt check and through swift-certificates'
/// certificate signature check. Every `valid` vector must verify and every `invalid` one must not;
/// `acceptable` ones may go either way. The vectors are read from `../shared/fixtures/wycheproof`.
@Suite struct WycheproofTests {
    static let directory: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()  // Wycheproof
        .deletingLastPathComponent()  // AppStoreSecurityTests
        .deletingLastPathComponent()  // Tests
        .deletingLastPathComponent()  // repository
        .deletingLastPathComponent()
        .appendingPathComponent("shared/fixtures/wycheproof")

    static var available: Bool { FileManager.default.fileExists(atPath: directory.path) }

    struct Vectors: Decodable {
        struct Group: Decodable {
            struct Key: Decodable {
                var curve: String
                var uncompressed: String
            }
            var publicKey: Key
            var sha: String
            var tests: [Case]
        }
        struct Case: Decodable {
            var tcId: Int
            var comment: String
            var msg: String
            var sig: String
            var result: String
        }
        var numberOfTests: Int
        var testGroups: [Group]
    }

    static func load(_ name: String) throws -> Vectors {
        try JSONDecoder().decode(Vectors.self, from: Data(contentsOf: directory.appendingPathComponent(name)))
    }

    static func bytes(_ hex: String) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(hex.count / 2)
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            bytes.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        return bytes
    }

    /// Runs every case of `file` through `accepts` and returns the cases whose outcome is wrong.
    static func mismatches(
        in file: String, expectedCount: Int,
        _ accepts: (Vectors.Group, _ message: [UInt8], _ signature: [UInt8]) throws -> Bool
    ) throws -> [String] {
        let vectors = try load(file)
        var wrong: [String] = []
        var count = 0
        for group in vectors.testGroups {
            for test in group.tests {
                count += 1
                let accepted = (try? accepts(group, bytes(test.msg), bytes(test.sig))) ?? false
                switch test.result {
                case "valid" where !accepted: wrong.append("#\(test.tcId) rejected: \(test.comment)")
                case "invalid" where accepted: wrong.append("#\(test.tcId) accepted: \(test.comment)")
                default: break
                }
            }
        }
        #expect(count == expectedCount && count == vectors.numberOfTests, "\(file): ran \(count) vectors")
        return wrong
    }

    @Test(.enabled(if: available, "Wycheproof's vectors are not present at ../shared/fixtures/wycheproof; skipped"))
    func jwsSignaturesAsRawRS() throws {
        let wrong = try Self.mismatches(in: "ecdsa_secp256r1_sha256_p1363_test.json", expectedCount: 262) {
            group, message, signature in
            let key = try P256.Signing.PublicKey(x963Representation: Self.bytes(group.publicKey.uncompressed))
            do {
                try CompactJWS.verifyES256(Data(signature), over: Data(message), with: key)
                return true
            } catch {
                #expect((error as? AppStoreSecurityError)?.code == .badSignature)
                return false
            }
        }
        #expect(wrong.isEmpty, "\(wrong)")
    }

    /// The two DER paths: a receipt's ECDSA signature (Kakin's CMS check through swift-crypto) and
    /// a certificate's signature (swift-certificates, as its `Verifier` checks each link).
    enum DERPath: String, CaseIterable, Sendable {
        case receipt, certificate
    }

    @Test(
        .enabled(if: available, "Wycheproof's vectors are not present at ../shared/fixtures/wycheproof; skipped"),
        arguments: [
            ("ecdsa_secp256r1_sha256_test.json", 484),
            ("ecdsa_secp384r1_sha384_test.json", 504),
        ], DERPath.allCases)
    func derSignatures(vectors: (file: String, count: Int), path: DERPath) throws {
        let wrong = try Self.mismatches(in: vectors.file, expectedCount: vectors.count) { group, message, signature in
            let (key, digest) = try Self.certificateKey(group)
            switch path {
            case .receipt:
                return try CMSSignatureCheck.isValidECDSA(signature, over: message, digest: digest, key: key)
            case .certificate:
                let algorithm: Certificate.SignatureAlgorithm =
                    digest == .sha384 ? .ecdsaWithSHA384 : .ecdsaWithSHA256
                return key.isValidSignature(signature, for: message, signatureAlgorithm: algorithm)
            }
        }
        #expect(wrong.isEmpty, "\(wrong)")
    }

    /// The group's key as a certificate key, and the hash its vectors use.
    static func certificateKey(
        _ group: Vectors.Group
    ) throws -> (Certificate.PublicKey, CMSSignatureCheck.DigestKind) {
        let point = bytes(group.publicKey.uncompressed)
        switch (group.publicKey.curve, group.sha) {
        case ("secp256r1", "SHA-256"):
            return (Certificate.PublicKey(try P256.Signing.PublicKey(x963Representation: point)), .sha256)
        case ("secp384r1", "SHA-384"):
            return (Certificate.PublicKey(try P384.Signing.PublicKey(x963Representation: point)), .sha384)
        default:
            throw AppStoreSecurityError(.wrongAlgorithm, found: "\(group.publicKey.curve) with \(group.sha)")
        }
    }
}

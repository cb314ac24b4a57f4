import CKakinP256
import Crypto
import Foundation
import Testing

@testable import AppStoreSecurity

/// The prepared-key check agrees with swift-crypto: it accepts what swift-crypto accepts and
/// never accepts what swift-crypto rejects.
struct P256PreparedKeyTests {
    /// Any 32 bytes as a message hash, to sign and check hashes no message is known to have.
    struct RawDigest: Digest {
        static let byteCount = 32
        let bytes: [UInt8]

        func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
            try bytes.withUnsafeBytes(body)
        }
        func makeIterator() -> IndexingIterator<[UInt8]> { bytes.makeIterator() }
        var description: String { bytes.map { String(format: "%02x", $0) }.joined() }
    }

    /// The group order, big-endian.
    static let order: [UInt8] = [
        0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
        0xbc, 0xe6, 0xfa, 0xad, 0xa7, 0x17, 0x9e, 0x84, 0xf3, 0xb9, 0xca, 0xc2, 0xfc, 0x63, 0x25, 0x51,
    ]

    /// a − b for 32-byte big-endian numbers, a ≥ b.
    static func subtract(_ a: [UInt8], _ b: [UInt8]) -> [UInt8] {
        var result = [UInt8](repeating: 0, count: 32)
        var borrow = 0
        for index in stride(from: 31, through: 0, by: -1) {
            var value = Int(a[index]) - Int(b[index]) - borrow
            borrow = value < 0 ? 1 : 0
            if value < 0 { value += 256 }
            result[index] = UInt8(value)
        }
        return result
    }

    func reference(_ key: P256.Signing.PublicKey, _ signature: [UInt8], _ digest: some Digest) -> Bool {
        guard let parsed = try? P256.Signing.ECDSASignature(rawRepresentation: signature) else { return false }
        return key.isValidSignature(parsed, for: digest)
    }

    @Test func acceptsValidSignaturesAndRejectsAlteredOnes() throws {
        var random = SystemRandomNumberGenerator()
        for _ in 0..<6 {
            let privateKey = P256.Signing.PrivateKey()
            let prepared = try #require(P256PreparedKey(privateKey.publicKey))
            for _ in 0..<40 {
                let message = Data((0..<Int.random(in: 1...300, using: &random)).map { _ in UInt8.random(in: 0...255) })
                let digest = SHA256.hash(data: message)
                let signature = try privateKey.signature(for: digest).rawRepresentation
                #expect(prepared.isValidSignature(signature, digest: digest) == true)

                // (r, n − s) is the same signature's other form: both accept it.
                let high = Data(signature.prefix(32)) + Data(Self.subtract(Self.order, Array(signature.suffix(32))))
                #expect(reference(privateKey.publicKey, Array(high), digest))
                #expect(prepared.isValidSignature(high, digest: digest) == true)

                var altered = Array(signature)
                altered[Int.random(in: 0..<64, using: &random)] ^= UInt8(1 << Int.random(in: 0..<8, using: &random))
                #expect(!reference(privateKey.publicKey, altered, digest))
                #expect(prepared.isValidSignature(Data(altered), digest: digest) != true)

                var otherDigest = Array(digest)
                otherDigest[Int.random(in: 0..<32, using: &random)] ^= 0x80
                #expect(prepared.isValidSignature(signature, digest: RawDigest(bytes: otherDigest)) != true)
            }
            // Another key's signature.
            let other = try P256.Signing.PrivateKey().signature(for: SHA256.hash(data: Data("x".utf8)))
            #expect(
                prepared.isValidSignature(other.rawRepresentation, digest: SHA256.hash(data: Data("x".utf8))) != true)
        }
    }

    @Test func hashesAtOrAboveTheOrderAreReducedAsSwiftCryptoDoes() throws {
        let privateKey = P256.Signing.PrivateKey()
        let prepared = try #require(P256PreparedKey(privateKey.publicKey))
        let digests: [[UInt8]] = [
            Self.order,  // reduces to zero
            [UInt8](repeating: 0xff, count: 32),
            Array(Self.order.prefix(31)) + [0x52],
            [UInt8](repeating: 0, count: 32),
        ]
        for bytes in digests {
            let digest = RawDigest(bytes: bytes)
            let signature = try privateKey.signature(for: digest).rawRepresentation
            #expect(reference(privateKey.publicKey, Array(signature), digest))
            #expect(prepared.isValidSignature(signature, digest: digest) == true, "\(digest)")
        }
    }

    @Test func outOfRangeValuesAreRejected() throws {
        let privateKey = P256.Signing.PrivateKey()
        let prepared = try #require(P256PreparedKey(privateKey.publicKey))
        let digest = SHA256.hash(data: Data("kakin".utf8))
        let signature = Array(try privateKey.signature(for: digest).rawRepresentation)
        let zero = [UInt8](repeating: 0, count: 32)
        let ones = [UInt8](repeating: 0xff, count: 32)
        let r = Array(signature.prefix(32))
        let s = Array(signature.suffix(32))
        for candidate in [zero + s, r + zero, Self.order + s, r + Self.order, ones + s, r + ones, zero + zero] {
            #expect(prepared.isValidSignature(Data(candidate), digest: digest) == false)
        }
        #expect(prepared.isValidSignature(Data(signature.prefix(63)), digest: digest) == nil)
    }

    /// The inverse modulo the order (a variable-time GCD) on edge values and random ones.
    @Test func inversesModuloTheOrderAreInverses() {
        func check(_ bytes: [UInt8]) -> Int32 {
            bytes.withUnsafeBufferPointer { kakin_p256_check_inverse($0.baseAddress) }
        }
        /// `value` · 256^`bytes`, as 32 big-endian bytes.
        func number(_ value: UInt64, shiftedBy bytes: Int = 0) -> [UInt8] {
            var result = [UInt8](repeating: 0, count: 32)
            for index in 0..<8 where 31 - bytes - index >= 0 {
                result[31 - bytes - index] = UInt8((value >> (8 * UInt64(index))) & 0xff)
            }
            return result
        }
        let one = number(1)
        var edges: [[UInt8]] = [
            one, number(2), number(3), Self.subtract(Self.order, one), Self.subtract(Self.order, number(2)),
        ]
        for bytes in 0..<32 {
            edges.append(number(1, shiftedBy: bytes))
            edges.append(number(0x80, shiftedBy: bytes))
        }
        edges.append(Self.subtract(Self.order, number(0x80, shiftedBy: 31)))
        for value in edges { #expect(check(value) == 1, "\(value)") }
        var random = SystemRandomNumberGenerator()
        for _ in 0..<20_000 {
            var value = (0..<32).map { _ in UInt8.random(in: 0...255, using: &random) }
            value[0] &= 0x7f  // below n
            if value.allSatisfy({ $0 == 0 }) { continue }
            #expect(check(value) == 1, "\(value)")
        }
        #expect(check(number(0)) == -1)
        #expect(check(Self.order) == -1)
        #expect(check([UInt8](repeating: 0xff, count: 32)) == -1)
    }

    @Test func pointsOffTheCurveAreRefused() throws {
        let point = Array(P256.Signing.PrivateKey().publicKey.rawRepresentation)
        #expect(P256PreparedKey(point: point) != nil)
        var moved = point
        moved[63] ^= 1
        #expect(P256PreparedKey(point: moved) == nil)
        #expect(P256PreparedKey(point: [UInt8](repeating: 0, count: 64)) == nil)
        #expect(P256PreparedKey(point: [UInt8](repeating: 0xff, count: 64)) == nil)
        #expect(P256PreparedKey(point: Array(point.prefix(63))) == nil)
    }

    @Test func aKeyIsPreparedAfterItsThresholdOfUses() throws {
        let key = P256.Signing.PrivateKey().publicKey
        let slot = P256PreparedKeySlot()
        for _ in 1..<P256PreparedKeySlot.threshold {
            #expect(slot.preparedKey(for: key) == nil)
        }
        let prepared = try #require(slot.preparedKey(for: key))
        #expect(slot.preparedKey(for: key) === prepared)
    }

    /// Once the verifier uses a prepared key, a forged signature is still refused.
    @Test func aVerifierWithAPreparedKeyStillRefusesForgeries() throws {
        let privateKey = P256.Signing.PrivateKey()
        let header = Data(#"{"alg":"ES256"}"#.utf8)
        let key = privateKey.publicKey
        let slot = P256PreparedKeySlot()
        for index in 0..<(P256PreparedKeySlot.threshold + 8) {
            let jws = try CompactJWS(
                try CompactJWS.sign(headerJSON: header, payload: Data("{\"n\":\(index)}".utf8), key: privateKey))
            try jws.verifySignature(with: key, prepared: slot.preparedKey(for: key))
            let forged = try CompactJWS(
                "\(jws.encodedHeader).\(Base64URL.encode(Data("{\"n\":\(index + 1)}".utf8))).\(jws.encodedSignature)")
            #expect(throws: AppStoreSecurityError(.badSignature)) {
                try forged.verifySignature(with: key, prepared: slot.preparedKey(for: key))
            }
        }
        #expect(slot.preparedKey(for: key) != nil)
    }
}

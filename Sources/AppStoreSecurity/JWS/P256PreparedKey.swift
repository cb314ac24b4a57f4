import CKakinP256
import Crypto
import Foundation
import Synchronization

/// A P-256 public key prepared for many signature checks.
///
/// An ECDSA check computes u1·G + u2·Q, and the multiple of the key Q costs most of it (256
/// doublings). For a key that signs many messages, like the App Store's signing certificate,
/// every multiple d·2^(8i)·Q (i < 32, 0 < d < 256) is computed once (about 0.5 MB) and a check
/// then adds at most 64 of those points, several times faster than a general check.
///
/// The result is only ever trusted to accept: a signature the prepared check rejects, or cannot
/// decide, is checked again by swift-crypto, so a mistake here could at worst cost time on a
/// signature that is bad anyway.
final class P256PreparedKey: Sendable {
    private let table: [UInt64]

    /// The table of the curve's generator, shared by every prepared key.
    private static let generator: [UInt64]? = {
        let x: [UInt8] = [
            0x6b, 0x17, 0xd1, 0xf2, 0xe1, 0x2c, 0x42, 0x47, 0xf8, 0xbc, 0xe6, 0xe5, 0x63, 0xa4, 0x40, 0xf2,
            0x77, 0x03, 0x7d, 0x81, 0x2d, 0xeb, 0x33, 0xa0, 0xf4, 0xa1, 0x39, 0x45, 0xd8, 0x98, 0xc2, 0x96,
        ]
        let y: [UInt8] = [
            0x4f, 0xe3, 0x42, 0xe2, 0xfe, 0x1a, 0x7f, 0x9b, 0x8e, 0xe7, 0xeb, 0x4a, 0x7c, 0x0f, 0x9e, 0x16,
            0x2b, 0xce, 0x33, 0x57, 0x6b, 0x31, 0x5e, 0xce, 0xcb, 0xb6, 0x40, 0x68, 0x37, 0xbf, 0x51, 0xf5,
        ]
        return table(forPoint: x + y)
    }()

    /// Prepares `key`; `nil` only if its point were not on the curve, which swift-crypto does
    /// not allow.
    convenience init?(_ key: P256.Signing.PublicKey) {
        self.init(point: Array(key.rawRepresentation))
    }

    /// Prepares the key whose point is `point` (X‖Y, 32 bytes each, big-endian); `nil` when that
    /// is not a point of the curve.
    init?(point: [UInt8]) {
        guard Self.generator != nil, let table = Self.table(forPoint: point) else { return nil }
        self.table = table
    }

    private static func table(forPoint xy: [UInt8]) -> [UInt64]? {
        guard xy.count == 64 else { return nil }
        let words = kakin_p256_table_words()
        var built = false
        let table = [UInt64](unsafeUninitializedCapacity: words) { buffer, count in
            built = xy.withUnsafeBufferPointer { point in
                kakin_p256_table_build(point.baseAddress, buffer.baseAddress) == 1
            }
            count = built ? words : 0
        }
        return built ? table : nil
    }

    /// Whether `signature` (raw R‖S, 64 bytes) signs `digest`: `true` when valid, `false` when
    /// not, `nil` when this check cannot tell (a general implementation must decide then).
    func isValidSignature(_ signature: Data, digest: some Digest) -> Bool? {
        guard signature.count == 64, type(of: digest).byteCount == 32, let generator = Self.generator else {
            return nil
        }
        let verdict = generator.withUnsafeBufferPointer { generator in
            table.withUnsafeBufferPointer { key in
                digest.withUnsafeBytes { digest in
                    signature.withUnsafeBytes { signature in
                        kakin_p256_verify(
                            generator.baseAddress, key.baseAddress,
                            digest.baseAddress?.assumingMemoryBound(to: UInt8.self),
                            signature.baseAddress?.assumingMemoryBound(to: UInt8.self))
                    }
                }
            }
        }
        switch verdict {
        case 1: return true
        case 0: return false
        default: return nil
        }
    }
}

/// The prepared form of one signing key, made once the key has signed enough messages to be
/// worth the table (the first ``threshold`` checks use swift-crypto alone).
final class P256PreparedKeySlot: Sendable {
    /// Checks with the general implementation before the key is prepared.
    static let threshold = 16
    private let uses = Atomic<Int>(0)
    private let prepared = AtomicLazyReference<P256PreparedKey>()

    /// The prepared key, once made; counts one use otherwise, and makes it at the threshold.
    func preparedKey(for key: P256.Signing.PublicKey) -> P256PreparedKey? {
        if let prepared = prepared.load() { return prepared }
        guard uses.wrappingAdd(1, ordering: .relaxed).newValue == Self.threshold, let made = P256PreparedKey(key) else {
            return nil
        }
        return prepared.storeIfNil(made)
    }
}

import Foundation
import KakinCore
import KakinTestSupport
import Testing

@testable import KakinLedger

/// Outbox payloads are written by hand on the writer; webhooks carry them as they are, so they
/// must be the bytes the encoder writes with sorted keys.
@Suite struct EventPayloadTests {
    static func encoded(_ payload: some EventPayload) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Array(try encoder.encode(payload))
    }

    static func written(_ payload: some EventPayload) -> [UInt8] {
        var output = JSONOutput()
        payload.write(to: &output)
        return output.bytes
    }

    @Test func transactionPayloadsMatchTheEncoder() throws {
        let full = TransactionEventPayload(
            transactionId: "2000000000000001", originalTransactionId: "1/\"x\"", productId: "com.example.ü",
            productType: "Consumable", quantity: 3, environment: "Sandbox", source: "app", ownerAssigned: true,
            revoked: false, revocationDate: 1_790_000_000_123, revocationReason: 1)
        let sparse = TransactionEventPayload(
            transactionId: "1", originalTransactionId: "1", productId: "p", productType: nil, quantity: nil,
            environment: nil, source: nil, ownerAssigned: nil, revoked: nil, revocationDate: nil,
            revocationReason: nil)
        let reinstated = TransactionEventPayload(
            transactionId: "1", originalTransactionId: "1", productId: "p", productType: "Non-Consumable", quantity: 1,
            environment: "Sandbox", revoked: false, reinstatedDate: 1_790_000_000_456)
        for payload in [full, sparse, reinstated] { #expect(Self.written(payload) == (try Self.encoded(payload))) }
    }

    @Test func balancePayloadsMatchTheEncoder() throws {
        let payloads = [
            BalanceEventPayload(
                currency: "coins", amount: -5, balance: 0, idempotencyKey: "clawback:1:coins", transactionId: "1",
                shortfall: 2),
            BalanceEventPayload(
                currency: "ポイント", amount: 100, balance: .max, idempotencyKey: "spend:\t", transactionId: nil,
                shortfall: nil),
        ]
        for payload in payloads { #expect(Self.written(payload) == (try Self.encoded(payload))) }
    }

    @Test func transferPayloadsMatchTheEncoder() throws {
        for ids in [[], ["1"], ["1", "2\\", "3"]] {
            let payload = TransferEventPayload(originalTransactionId: "1", from: "a", to: "b/ü", transactionIds: ids)
            #expect(Self.written(payload) == (try Self.encoded(payload)))
        }
    }

    @Test func consentPayloadsMatchTheEncoder() throws {
        let rescission = ConsentRescission(
            bundleID: "com.example.kakin", appTransactionID: "7/\"x\"", appUserID: "kid",
            environment: .sandbox, rescindedAt: Date(timeIntervalSince1970: 1_790_000_000.123),
            notificationUUID: "n", recordedAt: Date(timeIntervalSince1970: 1_790_000_001))
        for erased in [[:], [ConsentScopedData.aliases: 2, .appTransactions: 0]] {
            let payload = ConsentRescindedEventPayload(
                rescission, appUserID: AnonymousAppUserID.prefix + "0123456789abcdef0123456789abcdef", erased: erased)
            #expect(Self.written(payload) == (try Self.encoded(payload)))
            #expect(!String(decoding: Self.written(payload), as: UTF8.self).contains("0123456789abcdef"), "redacted")
        }
    }
}

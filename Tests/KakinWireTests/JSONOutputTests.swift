import Foundation
import KakinCore
import KakinWire
import Testing

/// The hand-written answer encoding must write the very bytes `JSONEncoder` writes with the API's
/// settings: clients verify the server's signature over those bytes and decode them as JSON.
@Suite struct JSONOutputTests {
    /// Text with everything an encoder must treat specially: quotes, backslashes, slashes, every
    /// control character, DEL, non-ASCII letters, emoji and line separators.
    static let awkward: [String] = [
        "", "plain", "q\"uote", "back\\slash", "a/b", "tab\tnew\nline\r", "\u{08}\u{0C}",
        String((0..<32).map { Character(Unicode.Scalar(UInt8($0))) }), "del\u{7F}", "ürün", "課金",
        "😀 \u{2028}\u{2029}", "a10", "a9", "B", "Z_", "é",
    ]

    struct Generator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state
        }
    }

    static func text(_ random: inout Generator) -> String {
        (0..<Int.random(in: 1...3, using: &random)).map { _ in awkward.randomElement(using: &random) ?? "" }.joined()
    }

    static func optional<T>(_ value: T, _ random: inout Generator) -> T? { Bool.random(using: &random) ? value : nil }

    static func date(_ random: inout Generator) -> Date {
        KakinJSON.date(epochMilliseconds: Int64.random(in: 0...4_000_000_000_000, using: &random))
    }

    static func answer(_ random: inout Generator) -> SignedCustomerAnswer {
        let transactions = (0..<Int.random(in: 0...4, using: &random)).map { _ in
            CustomerAnswer.Transaction(
                transactionId: text(&random), originalTransactionId: text(&random), productId: text(&random),
                productType: text(&random), quantity: Int.random(in: -5...Int.max, using: &random),
                purchaseDate: Int64.random(in: .min ... .max, using: &random),
                expiresDate: optional(Int64.random(in: 0...4_000_000_000_000, using: &random), &random),
                revocationDate: optional(0, &random), revocationReason: optional(1, &random),
                environment: text(&random), source: text(&random), signedTransaction: optional(text(&random), &random),
                store: optional(PurchaseStore.allCases.randomElement(using: &random)!, &random))
        }
        let entitlements = (0..<Int.random(in: 0...3, using: &random)).map { _ in
            Entitlement(
                identifier: text(&random), productID: text(&random), isActive: Bool.random(using: &random),
                expiresDate: optional(
                    KakinJSON.date(epochMilliseconds: Int64.random(in: -4_000_000_000_000...4_000_000_000_000, using: &random)),
                    &random),
                revocationDate: optional(KakinJSON.date(epochMilliseconds: -1), &random), transactionID: text(&random),
                originalTransactionID: text(&random), willRenew: optional(Bool.random(using: &random), &random),
                periodType: optional(Entitlement.PeriodType.allCases.randomElement(using: &random)!, &random),
                billingIssueDetectedAt: optional(date(&random), &random),
                gracePeriodExpiresAt: optional(date(&random), &random),
                environment: optional(Entitlement.Environment.allCases.randomElement(using: &random)!, &random),
                consentRescindedDate: optional(date(&random), &random),
                store: optional(PurchaseStore.allCases.randomElement(using: &random)!, &random))
        }
        var balances: [String: Int64] = [:]
        for _ in 0..<Int.random(in: 0...5, using: &random) {
            balances[text(&random)] = Int64.random(in: .min ... .max, using: &random)
        }
        return SignedCustomerAnswer(
            nonce: optional(text(&random), &random), signedDate: Int64.random(in: 0...Int64.max, using: &random),
            customer: CustomerAnswer(
                bundleId: text(&random), appUserId: text(&random), entitlements: entitlements, balances: balances,
                transactions: transactions, transactionCount: Int.random(in: 0...1_000_000, using: &random)))
    }

    @Test func customerAnswersAreWrittenAsTheEncoderWritesThem() throws {
        var random = Generator(state: 20_261_123)
        for _ in 0..<500 {
            let answer = Self.answer(&random)
            let expected = try KakinJSON.encoder().encode(answer)
            #expect(answer.jsonBytes() == Array(expected), "\(String(decoding: expected, as: UTF8.self))")
            #expect(try KakinJSON.decoder().decode(SignedCustomerAnswer.self, from: Data(answer.jsonBytes())) == answer)
        }
    }

    @Test func transactionPagesAreWrittenAsTheEncoderWritesThem() throws {
        var random = Generator(state: 7)
        for _ in 0..<200 {
            let answer = Self.answer(&random)
            let page = TransactionPage(
                nonce: answer.nonce, signedDate: answer.signedDate, bundleId: answer.customer.bundleId,
                appUserId: answer.customer.appUserId, transactions: answer.customer.transactions,
                nextCursor: Self.optional(Self.text(&random), &random))
            #expect(page.jsonBytes() == Array(try KakinJSON.encoder().encode(page)))
        }
    }
}

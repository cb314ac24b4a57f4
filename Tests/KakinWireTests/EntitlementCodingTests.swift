import Foundation
import Kakin
import KakinCore
import KakinWire
import Testing

/// One entitlement type for the server, its answers and the SDK: its wire form, and a device
/// cache written before it had one type.
@Suite struct EntitlementCodingTests {
    @Test func theWireFormHasMillisecondsAndTheAPIsKeysWhateverTheDateStrategy() throws {
        let entitlement = Entitlement(
            identifier: "premium", productID: "com.example.kakin.premium.monthly", isActive: true,
            expiresDate: Date(timeIntervalSince1970: 1_790_000_000.123), transactionID: "2000000000000002",
            originalTransactionID: "2000000000000001")
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let text = String(decoding: try encoder.encode(entitlement), as: UTF8.self)
        #expect(
            text == #"{"expiresDate":1790000000123,"identifier":"premium","isActive":true,"#
                + #""originalTransactionId":"2000000000000001","productId":"com.example.kakin.premium.monthly","#
                + #""transactionId":"2000000000000002"}"#)
        // The SDK's decoder and a plain one read it the same.
        #expect(try KakinJSON.decoder().decode(Entitlement.self, from: Data(text.utf8)) == entitlement)
        #expect(try JSONDecoder().decode(Entitlement.self, from: Data(text.utf8)) == entitlement)
        // The hand-written writer the server uses agrees with the encoder.
        var output = JSONOutput(capacity: 64)
        entitlement.write(to: &output)
        #expect(String(decoding: output.bytes, as: UTF8.self) == text)
    }

    @Test func subscriptionStatusIsOnTheWireAndAnswersWithoutItStillDecode() throws {
        let entitlement = Entitlement(
            identifier: "premium", productID: "com.example.kakin.premium.monthly", isActive: true,
            expiresDate: Date(timeIntervalSince1970: 1_790_000_000), transactionID: "2", originalTransactionID: "1",
            willRenew: false, periodType: .trial, billingIssueDetectedAt: Date(timeIntervalSince1970: 1_790_000_000.5),
            gracePeriodExpiresAt: Date(timeIntervalSince1970: 1_791_000_000))
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let text = String(decoding: try encoder.encode(entitlement), as: UTF8.self)
        #expect(
            text == #"{"billingIssueDetectedAt":1790000000500,"expiresDate":1790000000000,"#
                + #""gracePeriodExpiresAt":1791000000000,"identifier":"premium","isActive":true,"#
                + #""originalTransactionId":"1","periodType":"trial","productId":"com.example.kakin.premium.monthly","#
                + #""transactionId":"2","willRenew":false}"#)
        #expect(try KakinJSON.decoder().decode(Entitlement.self, from: Data(text.utf8)) == entitlement)
        var output = JSONOutput(capacity: 64)
        entitlement.write(to: &output)
        #expect(String(decoding: output.bytes, as: UTF8.self) == text)

        // An answer from a server that does not send them: all nil.
        let older =
            #"{"identifier":"premium","isActive":true,"originalTransactionId":"1","productId":"p","transactionId":"2"}"#
        let decoded = try JSONDecoder().decode(Entitlement.self, from: Data(older.utf8))
        #expect(decoded.willRenew == nil && decoded.periodType == nil)
        #expect(decoded.billingIssueDetectedAt == nil && decoded.gracePeriodExpiresAt == nil)
        // A period type this SDK does not know reads as unknown, not as a broken answer.
        let later = older.replacingOccurrences(of: "}", with: #","periodType":"prepaid","willRenew":true}"#)
        let fromLater = try JSONDecoder().decode(Entitlement.self, from: Data(later.utf8))
        #expect(fromLater.periodType == nil && fromLater.willRenew == true)
    }

    @Test func theDeviceCacheKeepsSubscriptionStatusAndOfflineEntitlementsLeaveItOut() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kakin-offline-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let now = Date(timeIntervalSince1970: 1_790_000_000)
        let premium = Entitlement(
            identifier: "premium", productID: "com.example.kakin.premium.monthly", isActive: true,
            expiresDate: now.addingTimeInterval(-86_400), transactionID: "2", originalTransactionID: "1",
            willRenew: true, periodType: .intro, billingIssueDetectedAt: now.addingTimeInterval(-86_400),
            gracePeriodExpiresAt: now.addingTimeInterval(5 * 86_400))
        let answer = CustomerInfo(appUserID: "alice", entitlements: [premium], balances: [:], source: .server)
        await OfflineEntitlements(directory: directory).learn(from: answer, at: now)

        // The kept answer, as a new launch reads it from offline.json.
        struct Kept: Decodable { var customers: [String: CustomerInfo] }
        let kept = try JSONDecoder().decode(
            Kept.self, from: Data(contentsOf: directory.appendingPathComponent("offline.json")))
        #expect(kept.customers["alice"]?.entitlements == [premium])

        // Computed on the device from the store's transactions: nothing the device cannot know.
        let transaction = StoreTransaction(
            id: "3", originalID: "1", productID: "com.example.kakin.premium.monthly",
            productType: .autoRenewableSubscription, quantity: 1, purchaseDate: now.addingTimeInterval(-3_600),
            expirationDate: now.addingTimeInterval(86_400), jwsRepresentation: "jws")
        let offline = await OfflineEntitlements(directory: directory).customer(
            appUserID: "alice", transactions: [transaction], at: now)
        let computed = try #require(offline.entitlements.first)
        #expect(computed.isActive && computed.transactionID == "3")
        #expect(computed.willRenew == nil && computed.periodType == nil)
        #expect(computed.billingIssueDetectedAt == nil && computed.gracePeriodExpiresAt == nil)
    }

    @Test func aKeptAnswerLastsUntilTheGracePeriodEnds() {
        let expires = Date(timeIntervalSince1970: 1_790_000_000)
        var premium = Entitlement(
            identifier: "premium", productID: "com.example.kakin.premium.monthly", isActive: true,
            expiresDate: expires, transactionID: "2", originalTransactionID: "1", willRenew: true, periodType: .normal,
            billingIssueDetectedAt: expires, gracePeriodExpiresAt: expires.addingTimeInterval(16 * 86_400))
        var customer = CustomerInfo(appUserID: "alice", entitlements: [premium], balances: [:])
        #expect(customer.isEntitled(to: "premium", at: expires.addingTimeInterval(86_400)))
        #expect(!customer.isEntitled(to: "premium", at: expires.addingTimeInterval(17 * 86_400)))
        // A grace period date without a billing problem extends nothing.
        premium.billingIssueDetectedAt = nil
        customer.entitlements = [premium]
        #expect(!customer.isEntitled(to: "premium", at: expires.addingTimeInterval(86_400)))
    }

    @Test func aDeviceCacheWrittenBeforeStillOpens() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kakin-offline-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        // offline.json as the SDK wrote it when its entitlements had keys of their own and dates in
        // Foundation's default form (seconds since 2001).
        let expires = Date(timeIntervalSince1970: 1_790_000_000)
        let earlier = """
            {"rules":{"com.example.kakin.premium.monthly":["premium"]},
             "customers":{"alice":{"appUserID":"alice","source":"server","balances":{"points":5},
              "entitlements":[{"identifier":"premium","productID":"com.example.kakin.premium.monthly",
               "isActive":true,"expiresDate":\(expires.timeIntervalSinceReferenceDate),"transactionID":"7"}]}}}
            """
        try Data(earlier.utf8).write(to: directory.appendingPathComponent("offline.json"))
        let offline = OfflineEntitlements(directory: directory)
        #expect(await offline.identifiers(forProductID: "com.example.kakin.premium.monthly") == ["premium"])
        let customer = await offline.customer(appUserID: "alice", transactions: [], at: expires.addingTimeInterval(-60))
        #expect(customer.balances == ["points": 5], "the last server answer was read")
    }
}

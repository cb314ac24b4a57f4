import Foundation
import Kakin
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

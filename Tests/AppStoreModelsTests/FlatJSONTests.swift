import AppStoreModels
import Foundation
import KakinTestSupport
import Testing

/// The fast reader of transaction payloads: whatever it reads, `JSONDecoder` reads to the same
/// value; whatever is outside its subset, it leaves to `JSONDecoder`.
@Suite struct FlatJSONTests {
    typealias Payload = JWSTransactionDecodedPayload

    static func fast(_ json: some Collection<UInt8>) -> Payload? {
        Array(json).withUnsafeBytes { Payload(flatJSON: $0) }
    }

    static func full(_ json: some Collection<UInt8>) -> Payload? {
        try? JSONDecoder().decode(Payload.self, from: Data(json))
    }

    /// A payload as the App Store signs one: every flat field, whole-millisecond dates.
    static let sample = Array(
        #"""
        {"transactionId":"2000000123456789","originalTransactionId":"2000000000000001",
         "webOrderLineItemId":"2000000000000002","bundleId":"com.example.app","productId":"com.example.monthly",
         "subscriptionGroupIdentifier":"21000001","purchaseDate":1795476597171,"originalPurchaseDate":1695476597000,
         "expiresDate":1798068597171,"quantity":1,"type":"Auto-Renewable Subscription",
         "appAccountToken":"7e3fb20b-4cdb-47cc-936d-99d65f608138","inAppOwnershipType":"PURCHASED",
         "signedDate":1795476597200,"revocationReason":1,"revocationDate":1795476600000,"isUpgraded":true,
         "offerType":2,"offerIdentifier":"spring","environment":"Production","storefront":"USA",
         "storefrontId":"143441","transactionReason":"RENEWAL","currency":"USD","price":-10990,
         "offerDiscountType":"PAY_AS_YOU_GO","appTransactionId":"704289572311597255","offerPeriod":"P1M",
         "revocationType":"REFUND_PRORATED","revocationPercentage":50000,"billingPlanType":"MONTHLY",
         "deviceVerification":"abc","deviceVerificationNonce":"def","advancedCommerceInfo":null,
         "commitmentInfo":null,"someFutureField":"kept out","anotherOne":12}
        """#.utf8)

    @Test func readsEveryFlatFieldAsJSONDecoderDoes() throws {
        let fast = try #require(Self.fast(Self.sample))
        #expect(fast == Self.full(Self.sample))
        #expect(fast.price == -10_990)
        #expect(fast.revocationReason == RevocationReason(rawValue: 1))
        #expect(fast.purchaseDate == Date(epochMilliseconds: 1_795_476_597_171))
        #expect(fast.isUpgraded == true)
    }

    @Test func nullsAndAbsentMembersAreNil() throws {
        let json = Array(#"{ "transactionId" : null , "quantity":null,"purchaseDate":null }"#.utf8)
        let fast = try #require(Self.fast(json))
        #expect(fast == Payload())
        #expect(fast == Self.full(json))
        #expect(Self.fast(Array("{}".utf8)) == Payload())
    }

    @Test(arguments: [
        #"{"transactionId":"a\"b"}"#,  // an escape
        #"{"purchaseDate":1697679936049.7297}"#,  // a fraction (Xcode writes these)
        #"{"purchaseDate":1e12}"#,  // an exponent
        #"{"quantity":01}"#,  // not JSON
        #"{"quantity":-}"#,
        #"{"quantity":9223372036854775808}"#,  // does not fit
        #"{"advancedCommerceInfo":{"a":1}}"#,  // a nested object
        #"{"someFutureField":[1,2]}"#,  // a nested array, even in an unknown member
        #"{"transactionId":"1","transactionId":"2"}"#,  // a known member twice
        #"{"quantity":null,"quantity":1}"#,  // twice, first null
        #"{"deviceVerificationNonce":"a","productId":"p","deviceVerificationNonce":"b"}"#,
        #"{"transactionId":1}"#,  // the wrong kind
        #"{"quantity":"1"}"#,
        #"{"isUpgraded":1}"#,
        #"{"transactionId":"1"} x"#,  // trailing bytes
        #"{"transactionId":"1""#,  // cut short
        #"{"transactionId":"1",}"#,
        #"["transactionId"]"#,
        "",
        "{\"transactionId\":\"\u{01}\"}",  // a control character
    ])
    func leavesTheRestToJSONDecoder(_ json: String) {
        #expect(Self.fast(Array(json.utf8)) == nil)
    }

    @Test func leavesInvalidUTF8ToJSONDecoder() {
        var json = Array(#"{"transactionId":"ab"}"#.utf8)
        json[18] = 0xFF
        #expect(Self.fast(json) == nil)
    }

    /// Random payloads of random fields, written by `JSONEncoder`: the fast reader takes them all
    /// and reads back what was written.
    @Test func readsWhatJSONEncoderWrites() throws {
        var generator = SystemRandomNumberGenerator()
        let encoder = JSONEncoder()
        for _ in 0..<500 {
            let payload = Self.randomPayload(using: &generator)
            let json = try encoder.encode(payload)
            let fast = try #require(Self.fast(json), "\(String(decoding: json, as: UTF8.self))")
            #expect(fast == payload)
            #expect(fast == Self.full(json))
        }
    }

    /// Bytes changed at random: whenever the fast reader still takes them, `JSONDecoder` reads
    /// the same value.
    @Test func agreesWithJSONDecoderOnDamagedInput() {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array(#"{}[]":,.-+eE0123456789 \tnultrfasxyz"#.utf8) + [0x00, 0x1F, 0x80, 0xC3, 0xFF]
        var taken = 0
        for _ in 0..<5_000 {
            var json = Self.sample
            for _ in 0..<Int.random(in: 1...3, using: &generator) {
                let index = Int.random(in: 0..<json.count, using: &generator)
                switch Int.random(in: 0..<3, using: &generator) {
                case 0: json[index] = alphabet.randomElement(using: &generator)!
                case 1: json.remove(at: index)
                default: json.insert(alphabet.randomElement(using: &generator)!, at: index)
                }
            }
            guard let fast = Self.fast(json) else { continue }
            taken += 1
            #expect(fast == Self.full(json), "\(String(decoding: json, as: UTF8.self))")
        }
        #expect(taken > 0, "some damaged payloads stay in the subset (a changed digit, for one)")
    }

    @Test(.enabled(if: SharedFixtures.available, SharedFixtures.skipMessage))
    func agreesWithJSONDecoderOnApplesPayloads() throws {
        var read = 0
        for name in ["signedTransaction", "signedTransactionWithRevocation"] {
            let json = try SharedFixtures.model(name)
            guard let fast = Self.fast(json) else { continue }
            read += 1
            #expect(fast == Self.full(json), "\(name)")
        }
        for path in ["mock_signed_data/transactionInfo", "xcode/xcode-signed-transaction"] {
            let json = try SharedFixtures.jwsPayload(path)
            if let fast = Self.fast(json) {
                read += 1
                #expect(fast == Self.full(json), "\(path)")
            }
        }
        #expect(read > 0, "Apple's model payloads are flat")
    }

    static func randomPayload(using generator: inout some RandomNumberGenerator) -> Payload {
        func maybe<T>(_ value: @autoclosure () -> T) -> T? { Bool.random(using: &generator) ? value() : nil }
        func text() -> String {
            let characters = Array("abcXYZ019 -_.:éü漢😀")
            return String((0..<Int.random(in: 0...12, using: &generator)).map { _ in characters.randomElement()! })
        }
        // 1970 to 2065: Apple's dates, which a Double holds to well under a millisecond.
        func date() -> Date { Date(epochMilliseconds: Int64.random(in: 0...3_000_000_000_000, using: &generator)) }
        return Payload(
            transactionID: maybe(text()), originalTransactionID: maybe(text()), webOrderLineItemID: maybe(text()),
            bundleID: maybe(text()), productID: maybe(text()), subscriptionGroupIdentifier: maybe(text()),
            purchaseDate: maybe(date()), originalPurchaseDate: maybe(date()), expiresDate: maybe(date()),
            quantity: maybe(Int.random(in: -5...Int.max)), type: maybe(ProductType(rawValue: text())),
            appAccountToken: maybe(text()), inAppOwnershipType: maybe(InAppOwnershipType(rawValue: text())),
            signedDate: maybe(date()), revocationReason: maybe(RevocationReason(rawValue: Int.random(in: -1...9))),
            revocationDate: maybe(date()), isUpgraded: maybe(Bool.random()),
            offerType: maybe(OfferType(rawValue: Int.random(in: 0...5))), offerIdentifier: maybe(text()),
            environment: maybe(AppStoreEnvironment(rawValue: text())), storefront: maybe(text()),
            storefrontID: maybe(text()), transactionReason: maybe(TransactionReason(rawValue: text())),
            currency: maybe(text()), price: maybe(Int64.random(in: Int64.min...Int64.max)),
            offerDiscountType: maybe(OfferDiscountType(rawValue: text())), appTransactionID: maybe(text()),
            offerPeriod: maybe(text()), revocationType: maybe(RevocationType(rawValue: text())),
            revocationPercentage: maybe(Int.random(in: 0...100_000)),
            billingPlanType: maybe(BillingPlanType(rawValue: text())), deviceVerification: maybe(text()),
            deviceVerificationNonce: maybe(text()))
    }
}

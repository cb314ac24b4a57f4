import Foundation
import Testing

@testable import KakinServer

@Suite("Checkout: signed links")
struct CheckoutLinkTests {
    static let key = CheckoutLink.Key(stripeSecretKey: "sk_test_checkout")
    static let made = Date(timeIntervalSince1970: 1_800_000_000)
    static let link = CheckoutLink(
        bundleID: "com.example.kakin", appUserID: "user 1&2", productID: "com.example.kakin.unlock",
        returnURL: "myapp://checkout/done?x=1", expiresAt: made.addingTimeInterval(CheckoutLink.lifetime))

    @Test func aLinkVerifiesUntilItExpires() throws {
        let fields = Self.link.fields(with: Self.key)
        let (read, signature) = try CheckoutLink.verify(
            fields, bundleID: "com.example.kakin", key: Self.key, now: Self.made.addingTimeInterval(899))
        #expect(read == Self.link)
        #expect(signature == fields["signature"])
        #expect(fields["expires"] == "1800000900")
        #expect(throws: CheckoutLink.Failure.expiredLink) {
            try CheckoutLink.verify(fields, bundleID: "com.example.kakin", key: Self.key, now: Self.made.addingTimeInterval(900))
        }
    }

    @Test(arguments: ["appUserId", "productId", "returnUrl", "expires", "signature"])
    func changingAFieldBreaksTheSignature(field: String) {
        var fields = Self.link.fields(with: Self.key)
        fields[field] = field == "expires" ? "1800009999" : field == "signature"
            ? String(repeating: "A", count: 43) : fields[field]! + "x"
        #expect(throws: CheckoutLink.Failure.forgedLink) {
            try CheckoutLink.verify(fields, bundleID: "com.example.kakin", key: Self.key, now: Self.made)
        }
    }

    @Test func aLinkOfAnotherAppOrKeyIsForged() {
        let fields = Self.link.fields(with: Self.key)
        #expect(throws: CheckoutLink.Failure.forgedLink) {
            try CheckoutLink.verify(fields, bundleID: "com.example.other", key: Self.key, now: Self.made)
        }
        #expect(throws: CheckoutLink.Failure.forgedLink) {
            try CheckoutLink.verify(
                fields, bundleID: "com.example.kakin", key: CheckoutLink.Key(stripeSecretKey: "sk_test_other"),
                now: Self.made)
        }
    }

    @Test func aStaleForgeryIsForgedNotExpired() {
        var fields = Self.link.fields(with: Self.key)
        fields["appUserId"] = "someone else"
        #expect(throws: CheckoutLink.Failure.forgedLink) {
            try CheckoutLink.verify(fields, bundleID: "com.example.kakin", key: Self.key, now: Self.made.addingTimeInterval(86_400))
        }
    }

    @Test(arguments: ["appUserId", "signature", "expires"])
    func aMissingOrMalformedFieldIsIncomplete(field: String) {
        var fields = Self.link.fields(with: Self.key)
        fields[field] = nil
        #expect(throws: CheckoutLink.Failure.incompleteLink) {
            try CheckoutLink.verify(fields, bundleID: "com.example.kakin", key: Self.key, now: Self.made)
        }
        fields[field] = "+1 !"
        #expect(throws: (any Error).self) {
            try CheckoutLink.verify(fields, bundleID: "com.example.kakin", key: Self.key, now: Self.made)
        }
    }

    @Test func fieldsDoNotRunIntoEachOther() {
        // The same characters split differently between two fields sign differently.
        let a = CheckoutLink(bundleID: "b", appUserID: "ab", productID: "c", returnURL: "r", expiresAt: Self.made)
        let b = CheckoutLink(bundleID: "b", appUserID: "a", productID: "bc", returnURL: "r", expiresAt: Self.made)
        #expect(a.signature(with: Self.key) != b.signature(with: Self.key))
    }
}

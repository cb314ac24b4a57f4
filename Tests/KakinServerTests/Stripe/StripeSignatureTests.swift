import Foundation
import Testing

@testable import KakinServer

@Suite("Stripe webhooks: the Stripe-Signature header")
struct StripeSignatureTests {
    static let body = Data(#"{"id":"evt_1","object":"event","type":"invoice.paid"}"#.utf8)
    static let signedAt = Date(timeIntervalSince1970: 1_795_000_000)
    // HMAC-SHA256 of "1795000000.<body>", worked out apart from Kakin (Python's hmac module).
    static let underTestSecret = "cf6b9d54b136688b38b50b424a079ec2d76f9d5581f27f851d9ee97880c657d9"
    static let underRolledSecret = "2a1a54e43469498d2f1438fb1c3e2021858d6ee4e997a7dc3c78655c968f7286"

    let verifier = StripeSignature(secrets: ["whsec_test_secret"])

    func verify(_ header: String?, body: Data = body, now: Date = signedAt.addingTimeInterval(10)) throws(
        StripeSignature.Failure
    ) -> Date {
        try verifier.verify(header: header, body: body, now: now)
    }

    @Test func aSignatureOfTheBodyAndTimestampUnderTheSecretIsAccepted() throws {
        #expect(try verify("t=1795000000,v1=\(Self.underTestSecret)") == Self.signedAt)
        // Uppercase hex, spaces after commas and Stripe's test-mode v0 are read as Stripe writes them.
        #expect(try verify("t=1795000000, v1=\(Self.underTestSecret.uppercased()), v0=00") == Self.signedAt)
        // The header Kakin writes for tests is the one Stripe writes.
        let header = StripeSignature.header(for: Self.body, secret: "whsec_test_secret", timestamp: Self.signedAt)
        #expect(header == "t=1795000000,v1=\(Self.underTestSecret)")
    }

    @Test func whileASecretIsRolledAnyV1MatchingAnySecretIsAccepted() throws {
        // Stripe signs with the old and the new secret; this endpoint knows only the new one.
        #expect(try verify("t=1795000000,v1=\(Self.underRolledSecret),v1=\(Self.underTestSecret)") == Self.signedAt)
        // The operator lists both secrets; Stripe signs with the rolled one only.
        let both = StripeSignature(secrets: ["whsec_old", "whsec_rolled"])
        let signedAt = try both.verify(
            header: "t=1795000000,v1=\(Self.underRolledSecret)", body: Self.body, now: Self.signedAt)
        #expect(signedAt == Self.signedAt)
    }

    @Test func aChangedBodyTimestampOrSecretIsRefused() {
        var changed = Self.body
        changed[changed.count - 3] = UInt8(ascii: "e")  // "invoice.paie"
        #expect(throws: StripeSignature.Failure.signatureMismatch) {
            try verify("t=1795000000,v1=\(Self.underTestSecret)", body: changed)
        }
        #expect(throws: StripeSignature.Failure.signatureMismatch) {
            try verify("t=1795000001,v1=\(Self.underTestSecret)")
        }
        #expect(throws: StripeSignature.Failure.signatureMismatch) {
            try verify("t=1795000000,v1=\(Self.underRolledSecret)")
        }
        // Only v1 counts: a v0 equal to the right HMAC is not a signature Kakin accepts.
        #expect(throws: StripeSignature.Failure.signatureMismatch) {
            try verify("t=1795000000,v1=00,v0=\(Self.underTestSecret)")
        }
        // A v1 that is not 32 bytes of hex cannot match.
        #expect(throws: StripeSignature.Failure.signatureMismatch) {
            try verify("t=1795000000,v1=\(Self.underTestSecret.dropLast(2))")
        }
        #expect(throws: StripeSignature.Failure.signatureMismatch) {
            try verify("t=1795000000,v1=\(Self.underTestSecret.dropLast())g")
        }
    }

    @Test func aRequestSignedLongerAgoThanTheToleranceIsRefused() throws {
        let header = "t=1795000000,v1=\(Self.underTestSecret)"
        #expect(try verify(header, now: Self.signedAt.addingTimeInterval(300)) == Self.signedAt)
        #expect(throws: StripeSignature.Failure.timestampOutsideTolerance) {
            try verify(header, now: Self.signedAt.addingTimeInterval(301))
        }
        // A clock behind Stripe's is not a replay: a timestamp ahead of it is accepted.
        #expect(try verify(header, now: Self.signedAt.addingTimeInterval(-600)) == Self.signedAt)
        var strict = verifier
        strict.tolerance = 5
        #expect(throws: StripeSignature.Failure.timestampOutsideTolerance) {
            try strict.verify(header: header, body: Self.body, now: Self.signedAt.addingTimeInterval(6))
        }
    }

    @Test func aMissingOrMalformedHeaderIsRefusedAsSuch() {
        #expect(throws: StripeSignature.Failure.missingHeader) { try verify(nil) }
        for header in [
            "", "v1=\(Self.underTestSecret)", "t=soon,v1=\(Self.underTestSecret)", "t=1795000000",
            "t=1795000000,v0=\(Self.underTestSecret)", "t=1795000000,t=1795000001,v1=\(Self.underTestSecret)",
        ] {
            #expect(throws: StripeSignature.Failure.malformedHeader, "\(header)") { try verify(header) }
        }
    }
}

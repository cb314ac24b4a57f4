import Crypto
import Foundation
import KakinServer
import Synchronization
import Testing

@Suite struct CustomerTokenTests {
    static let secret = SymmetricKey(data: Data("a-customer-token-secret-of-32-bytes!".utf8))
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    @Test func aMintedTokenVerifiesForItsCustomerAndApp() throws {
        let token = CustomerToken.mint(appUserID: "alice", bundleID: "com.example.app", secret: Self.secret, now: Self.now)
        #expect(token.split(separator: ".").count == 3)
        let claims = try CustomerToken.verify(
            token, appUserID: "alice", bundleID: "com.example.app", secret: Self.secret, now: Self.now.addingTimeInterval(60))
        #expect(claims.sub == "alice" && claims.aud == "com.example.app" && claims.exp - claims.iat == 3600)
    }

    @Test(arguments: [
        ("bob", "com.example.app", 0.0, CustomerToken.Failure.customerTokenWrongCustomer),
        ("alice", "com.example.other", 0.0, .customerTokenWrongCustomer),
        ("alice", "com.example.app", 3_600.0 + 61, .customerTokenExpired),
        ("alice", "com.example.app", -120.0, .customerTokenExpired),
    ])
    func aTokenForAnotherCustomerAppOrTimeIsRefused(
        user: String, app: String, offset: Double, failure: CustomerToken.Failure
    ) {
        let token = CustomerToken.mint(appUserID: "alice", bundleID: "com.example.app", secret: Self.secret, now: Self.now)
        #expect(throws: failure) {
            try CustomerToken.verify(
                token, appUserID: user, bundleID: app, secret: Self.secret, now: Self.now.addingTimeInterval(offset))
        }
    }

    @Test func forgedAndMalformedTokensAreInvalid() throws {
        let token = CustomerToken.mint(appUserID: "alice", bundleID: "com.example.app", secret: Self.secret, now: Self.now)
        let other = SymmetricKey(data: Data("another-secret-another-secret-!!!!".utf8))
        let forged = CustomerToken.mint(appUserID: "alice", bundleID: "com.example.app", secret: other, now: Self.now)
        let parts = token.split(separator: ".").map(String.init)
        // The header says `none`, with the signature dropped.
        let none = Data(#"{"alg":"none","typ":"JWT"}"#.utf8).base64EncodedString()
            .replacingOccurrences(of: "=", with: "")
        // A payload for bob under alice's signature.
        let bobPayload = CustomerToken.mint(appUserID: "bob", bundleID: "com.example.app", secret: other, now: Self.now)
            .split(separator: ".")[1]
        for bad in [
            forged, "", "a.b", "\(none).\(parts[1]).", "\(parts[0]).\(bobPayload).\(parts[2])", token + "x",
            "\(parts[0]).\(parts[1]).\(parts[2].dropLast(2))", "\(parts[0]).!!.\(parts[2])",
        ] {
            #expect(throws: CustomerToken.Failure.customerTokenInvalid) {
                try CustomerToken.verify(
                    bad, appUserID: "alice", bundleID: "com.example.app", secret: Self.secret, now: Self.now)
            }
        }
    }

    @Test func aTokenClaimingMoreThanADayIsRefused() {
        let token = CustomerToken.mint(
            appUserID: "alice", bundleID: "com.example.app", secret: Self.secret, lifetime: 2 * 86_400, now: Self.now)
        #expect(throws: CustomerToken.Failure.customerTokenExpired) {
            try CustomerToken.verify(token, appUserID: "alice", bundleID: "com.example.app", secret: Self.secret, now: Self.now)
        }
    }
}

@Suite struct ClientRateLimiterTests {
    final class Clock: Sendable {
        let seconds = Mutex(0.0)
        func advance(_ by: Double) { seconds.withLock { $0 += by } }
    }

    @Test func aBurstIsServedUpToTheBucketThenRefusedUntilItRefills() {
        let clock = Clock()
        var policy = RateLimitPolicy()
        policy.limits[.read] = .init(perSecond: 10, burst: 50)
        let limiter = ClientRateLimiter(policy: policy, uptime: { clock.seconds.withLock { $0 } })
        let answers = (0..<300).map { _ in limiter.take(.read, client: "203.0.113.7") }
        #expect(answers.prefix(50).allSatisfy { $0 == nil })
        #expect(answers.dropFirst(50).allSatisfy { $0 == 1 })
        // Another address and another kind are served meanwhile.
        #expect(limiter.take(.read, client: "198.51.100.1") == nil)
        #expect(limiter.take(.upload, client: "203.0.113.7") == nil)
        clock.advance(0.5)
        #expect((0..<5).allSatisfy { _ in limiter.take(.read, client: "203.0.113.7") == nil })
        #expect(limiter.take(.read, client: "203.0.113.7") == 1)
    }

    @Test func theWaitIsTheTimeForOneToken() {
        let clock = Clock()
        var policy = RateLimitPolicy()
        policy.limits[.alias] = .init(perSecond: 1, burst: 1)
        let limiter = ClientRateLimiter(policy: policy, uptime: { clock.seconds.withLock { $0 } })
        #expect(limiter.take(.alias, client: "a") == nil)
        #expect(limiter.take(.alias, client: "a") == 1)
        clock.advance(1)
        #expect(limiter.take(.alias, client: "a") == nil)
    }

    @Test func turnedOffNothingIsLimited() {
        var policy = RateLimitPolicy()
        policy.enabled = false
        policy.limits[.read] = .init(perSecond: 1, burst: 1)
        let limiter = ClientRateLimiter(policy: policy)
        #expect((0..<100).allSatisfy { _ in limiter.take(.read, client: "a") == nil })
    }
}

import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import KakinTestSupport
import NIOCore
@testable import KakinDashboard
@testable import KakinServer
@testable import KakinLedger
import Testing

@Suite struct SignInThrottlePolicyTests {
    @Test func waitsDoubleAfterTheFreeAttemptsUpToTheCeiling() {
        let policy = SignInThrottlePolicy(sourceAttempts: 5, accountAttempts: 20, firstWaitSeconds: 1, maxWaitSeconds: 900)
        let source = SignInSubject.source("203.0.113.7")
        #expect((1...5).map { policy.waitSeconds(afterFailures: $0, of: source) } == [0, 0, 0, 0, 0])
        #expect((6...10).map { policy.waitSeconds(afterFailures: $0, of: source) } == [1, 2, 4, 8, 16])
        #expect(policy.waitSeconds(afterFailures: 15, of: source) == 512)
        #expect(policy.waitSeconds(afterFailures: 16, of: source) == 900)
        #expect(policy.waitSeconds(afterFailures: 10_000, of: source) == 900)
        #expect(policy.waitSeconds(afterFailures: 20, of: .dashboard) == 0)
        #expect(policy.waitSeconds(afterFailures: 21, of: .dashboard) == 1)
    }

    @Test func subjectsRoundTripThroughTheirKeys() {
        for subject in [SignInSubject.source("198.51.100.4"), .source("2001:db8:0:1::/64"), .dashboard] {
            #expect(SignInSubject(key: subject.key) == subject)
        }
        #expect(SignInSubject(key: "source:") == nil)
        #expect(SignInSubject(key: "user:alice") == nil)
    }

    @Test func anIPv6AddressCountsAsItsNetwork() {
        #expect(SignInThrottle.network(of: "2001:db8:0:1:aaaa:bbbb:cccc:dddd") == "2001:db8:0:1::/64")
        #expect(SignInThrottle.network(of: "2001:db8:0:1::9") == "2001:db8:0:1::/64")
        #expect(SignInThrottle.network(of: "::ffff:203.0.113.9") == "203.0.113.9")
        #expect(SignInThrottle.network(of: "203.0.113.9") == "203.0.113.9")
    }
}

@Suite struct SignInThrottleStoreTests {
    static let policy = SignInThrottlePolicy(sourceAttempts: 2, firstWaitSeconds: 10, maxWaitSeconds: 60, windowSeconds: 300)

    @Test(.enabled(if: PostgresTestDatabase.url != nil, Comment(rawValue: PostgresTestDatabase.skipMessage)))
    func serversSharingADatabaseCountTogether() async throws {
        try await PostgresTestDatabase.withSchema { schema in
            let first = try await openLedger(.postgres, schema: schema)
            let second = try await openLedger(.postgres, schema: schema)
            try await first.migrate()
            try await second.migrate()
            let now = Date(timeIntervalSince1970: 1_790_000_000)
            let source = SignInSubject.source("203.0.113.7")
            let counts = try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<40 {
                    let store = index.isMultiple(of: 2) ? first : second
                    group.addTask { try await store.recordSignInFailure(source, policy: Self.policy, now: now).failures }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            // Every failure was counted once, whichever server counted it.
            #expect(counts.sorted() == Array(1...40))
            #expect(try await second.signInLockedUntil([source], now: now) != nil)
            try await first.shutdown()
            try await second.shutdown()
        }
    }
}

/// The dashboard's sign-in and the API's keys, slowed down after wrong secrets.
@Suite struct SignInThrottleHTTPTests {
    static let policy = SignInThrottlePolicy(
        sourceAttempts: 5, accountAttempts: 8, firstWaitSeconds: 1, maxWaitSeconds: 900, windowSeconds: 900,
        trustForwardedFor: true)
    /// The dashboard's operator key on these servers.
    static let operatorKey = "correct horse battery"

    struct Server {
        let fixture: ServerFixture
        let metrics = ServerMetrics()
        let throttle: SignInThrottle
        let router: Router<KakinRequestContext>

        init() async throws {
            fixture = try await ServerFixture()
            let clock = fixture.clock
            throttle = SignInThrottle(
                service: fixture.service, policy: SignInThrottleHTTPTests.policy, metrics: metrics, now: { clock.now() })
            let http = KakinServerHTTP(
                service: fixture.service, signingKey: fixture.serverKey, metrics: metrics, signInThrottle: throttle)
            router = http.router()
            try DashboardRoutes(
                service: fixture.service,
                configuration: DashboardConfiguration(operatorKey: SignInThrottleHTTPTests.operatorKey),
                now: { clock.now() }, signInThrottle: throttle
            ).add(to: router)
        }
    }

    /// Posts the sign-in form from `address` with `password`; the answer's status.
    static func signIn(
        _ password: String, from address: String, _ client: some TestClientProtocol
    ) async throws -> TestResponse {
        var headers: HTTPFields = [HTTPField.Name("X-Forwarded-For")!: "10.0.0.1, \(address)"]
        let form = try await client.execute(uri: "/dashboard/login", method: .get, headers: headers)
        var browser = Browser()
        browser.keep(form)
        let token = try #require(Browser.csrf(in: form))
        headers[.cookie] = "kakin_login=\(token)"
        headers[.contentType] = "application/x-www-form-urlencoded"
        let body = "csrf=\(Browser.encode(token))&password=\(Browser.encode(password))"
        return try await client.execute(
            uri: "/dashboard/login", method: .post, headers: headers, body: ByteBuffer(string: body))
    }

    @Test func anAddressWaitsAfterFiveWrongPasswordsEvenWithTheRightOneThenSignsIn() async throws {
        let server = try await Server()
        let (store, clock) = (server.fixture.store, server.fixture.clock)
        try await Application(router: server.router).test(.router) { client in
            for _ in 1...6 {
                #expect(try await Self.signIn("wrong password", from: "203.0.113.7", client).status == .unauthorized)
            }
            // The sixth failure made the address wait 1 s: even the right password is refused.
            let refused = try await Self.signIn(Self.operatorKey, from: "203.0.113.7", client)
            #expect(refused.status == .tooManyRequests)
            #expect(refused.headers[.retryAfter] == "1")
            #expect(String(buffer: refused.body).contains("Too many failed sign-ins"))
            // Another address is not held up by it.
            #expect(try await Self.signIn(Self.operatorKey, from: "198.51.100.2", client).status == .seeOther)

            // A seventh failure after the wait: 2 s this time.
            _ = clock.advance(by: 1)
            #expect(try await Self.signIn("wrong again", from: "203.0.113.7", client).status == .unauthorized)
            let second = try await Self.signIn(Self.operatorKey, from: "203.0.113.7", client)
            #expect(second.status == .tooManyRequests)
            #expect(second.headers[.retryAfter] == "2")

            _ = clock.advance(by: 2)
            #expect(try await Self.signIn(Self.operatorKey, from: "203.0.113.7", client).status == .seeOther)
            // Signing in forgot the address's failures.
            #expect(!(try await store.signInFailures().map(\.subject).contains(.source("203.0.113.7"))))
        }
        let text = server.metrics.render()
        #expect(text.contains(#"kakin_sign_in_failures_total{kind="dashboard"} 7"#))
        #expect(text.contains(#"kakin_sign_in_refused_total{kind="dashboard"} 2"#))
    }

    @Test("24 wrong keys from four addresses slow those addresses, never an address without failures")
    func wrongKeysFromManyAddressesNeverHoldUpAnAddressThatDidNotFail() async throws {
        let server = try await Server()
        let (store, clock) = (server.fixture.store, server.fixture.clock)
        try await Application(router: server.router).test(.router) { client in
            // Six wrong keys from each of four addresses, at one instant: the first address uses its
            // five free attempts; the account's ninth failure (past its 8) puts it under attack, and
            // from then on every address that fails waits from that failure on.
            var statuses: [[HTTPResponse.Status]] = []
            for address in 1...4 {
                var answers: [HTTPResponse.Status] = []
                for attempt in 1...6 {
                    let answer = try await Self.signIn("guess \(address).\(attempt)", from: "192.0.2.\(address)", client)
                    answers.append(answer.status)
                }
                statuses.append(answers)
            }
            let (denied, waiting) = (HTTPResponse.Status.unauthorized, HTTPResponse.Status.tooManyRequests)
            #expect(statuses[0] == Array(repeating: denied, count: 6))
            #expect(statuses[1] == [denied, denied, denied, waiting, waiting, waiting])
            #expect(statuses[2] == [denied] + Array(repeating: waiting, count: 5))
            #expect(statuses[3] == [denied] + Array(repeating: waiting, count: 5))

            // The right keys from addresses that never failed are let in at once: the operator key
            // and an app's secret key.
            #expect(try await Self.signIn(Self.operatorKey, from: "198.51.100.50", client).status == .seeOther)
            #expect(try await Self.signIn("sk_test", from: "198.51.100.51", client).status == .seeOther)
            // The addresses that failed wait, even with the right key: 1 s after the first address's
            // sixth failure, 4 s after the second's third (counted without free attempts), 1 s
            // after the first failure of the others.
            for (address, wait) in [(1, "1"), (2, "4"), (3, "1"), (4, "1")] {
                let refused = try await Self.signIn(Self.operatorKey, from: "192.0.2.\(address)", client)
                #expect(refused.status == .tooManyRequests, "192.0.2.\(address)")
                #expect(refused.headers[.retryAfter] == wait, "192.0.2.\(address)")
            }
            // The account counted every failure but waits for nobody: it is listed without a
            // refusal of its own, and clearing it gives failing addresses their free attempts again.
            let account = try #require(try await store.signInFailures().first { $0.subject == .dashboard })
            #expect(account.failures == 11)
            #expect(try await store.signInLockedUntil([.source("198.51.100.52")], now: clock.now()) == nil)
            #expect(try await store.clearSignInFailures(.dashboard) == 1)
            #expect(try await Self.signIn("guess", from: "192.0.2.9", client).status == .unauthorized)
            #expect(try await Self.signIn(Self.operatorKey, from: "192.0.2.9", client).status == .seeOther)
        }
        let text = server.metrics.render()
        // 6 + 3 + 1 + 1 failures counted and 13 attempts refused unchecked, then 4 refusals of the
        // right key and one more failure.
        #expect(text.contains(#"kakin_sign_in_failures_total{kind="dashboard"} 12"#))
        #expect(text.contains(#"kakin_sign_in_refused_total{kind="dashboard"} 17"#))
    }

    @Test func wrongSecretKeysMakeTheAddressWaitButNeverItsPublishableKey() async throws {
        let server = try await Server()
        let store = server.fixture.store
        let customer = "/v1/customers/alice?bundleId=\(ServerFixture.bundleID)"
        let spendPath = "/v1/customers/alice/balances/coins/spend"
        @Sendable func headers(_ key: String, from address: String, secret: Bool) -> HTTPFields {
            var fields: HTTPFields = [HTTPField.Name("X-Forwarded-For")!: address]
            if secret { fields[.authorization] = "Bearer \(key)" } else { fields[HTTPField.Name("X-Kakin-Key")!] = key }
            return fields
        }
        @Sendable func reconcile(_ key: String, from address: String, _ client: some TestClientProtocol) async throws -> TestResponse {
            try await client.execute(
                uri: "/v1/admin/reconcile?bundleId=\(ServerFixture.bundleID)", method: .post,
                headers: headers(key, from: address, secret: true))
        }
        try await Application(router: server.router).test(.router) { client in
            for index in 1...6 {
                let answer = try await reconcile("sk_guess_\(index)", from: "203.0.113.7", client)
                #expect(answer.status == .unauthorized)
            }
            // The right secret key from that address now waits, unchecked.
            let refused = try await reconcile("sk_test", from: "203.0.113.7", client)
            #expect(refused.status == .tooManyRequests)
            #expect(refused.headers[.retryAfter] == "1")
            #expect(String(buffer: refused.body).contains("\"code\":\"tooManyAttempts\""))
            let spend = try await client.execute(
                uri: spendPath, method: .post, headers: headers("sk_test", from: "203.0.113.7", secret: true),
                body: ByteBuffer(string: #"{"bundleId":"com.example.kakin","amount":1,"idempotencyKey":"k1"}"#))
            #expect(spend.status == .tooManyRequests)
            // The app's publishable key from the same address (an app's users behind one address)
            // is never held up.
            let asCustomer = try await client.execute(
                uri: customer, method: .get, headers: headers("pk_test", from: "203.0.113.7", secret: false))
            #expect(asCustomer.status == .ok)
            // Nor is another address's secret key.
            #expect(try await reconcile("sk_test", from: "198.51.100.2", client).status == .notFound)

            // Cleared by an operator: let in at the next attempt, though this server had learned the wait.
            try await store.clearSignInFailures(.source("203.0.113.7"))
            #expect(try await reconcile("sk_test", from: "203.0.113.7", client).status == .notFound)
        }
        let text = server.metrics.render()
        #expect(text.contains(#"kakin_sign_in_failures_total{kind="api"} 6"#))
        #expect(text.contains(#"kakin_sign_in_refused_total{kind="api"} 2"#))
    }

    @Test func withoutATrustedProxyTheHeaderIsIgnored() async throws {
        let fixture = try await ServerFixture()
        let throttle = SignInThrottle(service: fixture.service)
        let request = Request(
            head: HTTPRequest(method: .get, scheme: "http", authority: "localhost", path: "/",
                              headerFields: [HTTPField.Name("X-Forwarded-For")!: "203.0.113.7"]),
            body: .init(buffer: ByteBuffer()))
        let peer = try SocketAddress(ipAddress: "192.0.2.1", port: 4000)
        #expect(throttle.source(of: request, peer: peer) == .source("192.0.2.1"))
        let trusting = SignInThrottle(service: fixture.service, policy: SignInThrottlePolicy(trustForwardedFor: true))
        #expect(trusting.source(of: request, peer: peer) == .source("203.0.113.7"))
    }
}

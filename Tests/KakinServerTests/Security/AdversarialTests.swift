import Foundation
import HTTPTypes
import HummingbirdTesting
import KakinCore
import KakinLedger
@testable import KakinServer
import KakinTestSupport
import KakinWire
import NIOCore
import Synchronization
import Testing

/// The attacks of someone who holds only the publishable key (it ships in every copy of the app)
/// and a few app user IDs, played against a real server on both engines: each is refused, and
/// what real customers do still works. `recommended` is the configuration the Security Model
/// article recommends for production; `defaults` the configuration's defaults, under
/// `transferToNewUser`.
@Suite(.serialized) struct AdversarialTests {
    static let engines = StoreKind.allCases.filter { $0 != .memory }
    static let both = AttackedServer.Setup.allCases

    // MARK: 1. Stealing a purchase

    @Test(arguments: both, engines)
    func aPurchaseCannotBeStolenWithTheKeyAndAnID(_ setup: AttackedServer.Setup, _ kind: StoreKind) async throws {
        try await AttackedServer.run(setup, on: kind) { server in
            let victim = "victim"
            let (_, jws) = try await server.buy("premium.monthly", tester: "victim-account")
            #expect(try await server.upload(jws, for: victim).status == .ok)

            // The victim's signed transactions are not answered to the publishable key.
            let leaked = try await server.client.execute(
                uri: "/v1/customers/\(victim)/transactions?bundleId=\(AttackedServer.bundleID)&include=signedTransaction",
                method: .get, headers: server.device(victim))
            #expect(leaked.status == .forbidden && refusal(leaked).cause == "secretKeyRequired")
            let inAnswer = try await server.read(victim, query: "&transactions=5&include=signedTransaction")
            #expect(inAnswer.status == .forbidden)
            #expect(!String(buffer: inAnswer.body).contains(jws))

            // Had the JWS leaked anyway: posted by another customer, with or without the app
            // transaction of another Apple Account, it stays with its owner.
            let thief = "thief"
            for proof in [nil, try await server.appTransaction(of: "thief-account")] {
                let stolen = try await server.upload(jws, for: thief, proof: proof)
                #expect(stolen.status == .conflict && refusal(stolen).cause == "purchasedByAnotherAccount")
            }
            #expect(try await server.entitlements(of: victim).map(\.identifier) == ["premium"])
            #expect(try await server.entitlements(of: thief).isEmpty)

            // Legitimate: a new device signed in to the same Apple Account restores it for its new
            // user, and the purchase moves.
            let restored = try await server.upload(
                jws, for: "victim-new-device", proof: try await server.appTransaction(of: "victim-account"))
            #expect(restored.status == .ok)
            #expect(try await server.entitlements(of: "victim-new-device").map(\.identifier) == ["premium"])
            #expect(try await server.entitlements(of: victim).isEmpty)
        }
    }

    // MARK: 2. Reading customers by ID

    @Test(arguments: both, engines)
    func customersAreNotReadByIDAndBurstsAreThrottled(_ setup: AttackedServer.Setup, _ kind: StoreKind) async throws {
        try await AttackedServer.run(setup, on: kind) { server in
            if setup == .recommended {
                var bare = server.device()
                let missing = try await server.read("alice", headers: bare)
                #expect(missing.status == .unauthorized && refusal(missing).cause == "customerTokenMissing")
                bare[HTTPField.Name(KakinHeader.customerToken)!] = server.token(for: "mallory")
                let wrong = try await server.read("alice", headers: bare)
                #expect(wrong.status == .unauthorized && refusal(wrong).cause == "customerTokenWrongCustomer")
                bare[HTTPField.Name(KakinHeader.customerToken)!] = "a.b.c"
                #expect(try await server.read("alice", headers: bare).status == .unauthorized)
                #expect(try await server.read("alice").status == .ok, "with alice's own token")
            }
            // 300 reads of random IDs from one address within a second: the bucket runs dry.
            var statuses: [HTTPResponse.Status] = []
            var retryAfter: String?
            for _ in 0..<300 {
                let id = AnonymousAppUserID.make()
                let answer = try await server.read(id, headers: server.device(id, from: "203.0.113.9"))
                statuses.append(answer.status)
                if answer.status == .tooManyRequests { retryAfter = answer.headers[.retryAfter] }
            }
            #expect(statuses.filter { $0 == .ok }.count == 200)
            #expect(statuses.filter { $0 == .tooManyRequests }.count == 100)
            #expect(retryAfter.flatMap(Int.init).map { $0 >= 1 } == true)
            // Another address is served meanwhile.
            let other = AnonymousAppUserID.make()
            #expect(try await server.read(other, headers: server.device(other, from: "198.51.100.4")).status == .ok)
            // The refusals are counted; who may read the count depends on the setup.
            let metrics = try await server.client.execute(uri: "/metrics", method: .get, headers: [:])
            if setup == .recommended {
                #expect(metrics.status == .unauthorized, "the metrics need their token")
                let scraped = try await server.client.execute(
                    uri: "/metrics", method: .get, headers: [.authorization: "Bearer \(AttackedServer.metricsToken)"])
                #expect(String(buffer: scraped.body).contains("kakin_rate_limited_total{kind=\"read\"} 100"))
            } else {
                // Without a token, this machine reads them; a client through a proxy does not.
                #expect(String(buffer: metrics.body).contains("kakin_rate_limited_total{kind=\"read\"} 100"))
                let remote = try await server.client.execute(
                    uri: "/metrics", method: .get, headers: [HTTPField.Name("X-Forwarded-For")!: "203.0.113.9"])
                #expect(remote.status == .unauthorized)
            }
            // The app's backend is not limited; and the bucket refills.
            #expect(try await server.read(other, headers: server.backend).status == .ok)
            server.uptime.seconds.withLock { $0 += 1 }
            #expect(try await server.read(other, headers: server.device(other, from: "203.0.113.9")).status == .ok)
        }
    }

    // MARK: 3. Sandbox purchases in production

    @Test(arguments: both, engines)
    func sandboxPurchasesGrantOnlyAsTheAppDecided(_ setup: AttackedServer.Setup, _ kind: StoreKind) async throws {
        try await AttackedServer.run(setup, on: kind) { server in
            let (_, jws) = try await server.buy("removeAd", tester: "testflight")
            let tester = try await server.upload(jws, for: "testflight-user")
            if setup == .recommended {
                #expect(tester.status == .forbidden && refusal(tester).cause == "sandboxPurchaseNotAllowed")
                #expect(try await server.entitlements(of: "testflight-user").isEmpty)
                // App Review's account, on the list, is granted: the entitlement says Sandbox.
                let (_, review) = try await server.buy("removeAd", tester: "reviewer")
                #expect(try await server.upload(review, for: AttackedServer.reviewer).status == .ok)
                #expect(try await server.entitlements(of: AttackedServer.reviewer).map(\.environment) == [.sandbox])
            } else {
                // Granted, and said: to the app, and in the log at start.
                #expect(tester.status == .ok)
                #expect(try await server.entitlements(of: "testflight-user").map(\.environment) == [.sandbox])
                #expect(server.logs.contain("sandboxPurchases: grant"))
            }
        }
    }

    // MARK: 4. Offers signed for someone else

    @Test(arguments: both, engines)
    func offersAreSignedForTheAskingCustomerOnly(_ setup: AttackedServer.Setup, _ kind: StoreKind) async throws {
        try await AttackedServer.run(setup, on: kind) { server in
            let subscriber = "subscriber"
            let (bought, jws) = try await server.buy("premium.monthly", tester: "subscriber-account")
            #expect(try await server.upload(jws, for: subscriber).status == .ok)
            func ask(_ customer: String, token: String? = nil, transaction: String? = nil) async throws -> TestResponse {
                try await server.post(
                    "/v1/customers/\(KakinRoute.encode(customer))/offers/sign",
                    OfferSigningRequest(
                        bundleId: AttackedServer.bundleID, productId: "com.example.kakin.premium.monthly",
                        kind: .introductoryEligibility, appAccountToken: token, transactionId: transaction),
                    headers: server.device(customer))
            }
            // For himself the subscriber is refused the introductory offer.
            let own = try await ask(subscriber)
            #expect(own.status == .ok)
            let signed = try JSONDecoder().decode(SignedOffer.self, from: Data(buffer: own.body))
            #expect(signed.allowIntroductoryOffer == false)

            // A made-up customer carrying his transaction, or another customer's account token: refused.
            let madeUp = AnonymousAppUserID.make()
            let foreign = try await ask(madeUp, transaction: bought.id)
            #expect(foreign.status == .forbidden && refusal(foreign).cause == "foreignTransaction")
            let noHistory = try await ask(madeUp)
            #expect(noHistory.status == .badRequest && refusal(noHistory).cause == "noTransaction")
            let token = AppAccountToken.derived(from: subscriber).uuidString.lowercased()
            let otherToken = try await ask("someone-else", token: token)
            #expect(otherToken.status == .forbidden)
            if setup == .recommended {
                // A made-up identified customer needs a token the app's backend never made.
                var headers = server.device()
                headers[.contentType] = "application/json"
                let invented = try await server.post(
                    "/v1/customers/invented/offers/sign",
                    OfferSigningRequest(
                        bundleId: AttackedServer.bundleID, productId: "com.example.kakin.premium.monthly",
                        kind: .introductoryEligibility),
                    headers: headers)
                #expect(invented.status == .unauthorized)
            }
        }
    }

    // MARK: 5. Aliases

    @Test(arguments: both, engines)
    func anonymousIDsAreTheSDKsUnseenOnesRecordNothingAndNoneIsLogged(
        _ setup: AttackedServer.Setup, _ kind: StoreKind
    ) async throws {
        try await AttackedServer.run(setup, on: kind) { server in
            let target = "member"
            // Not the SDK's format: refused.
            let malformed = try await server.post(
                "/v1/customers/\(KakinRoute.encode("$kakin_anon_NOT-HEX!"))/alias",
                CustomerAliasRequest(bundleId: AttackedServer.bundleID, appUserId: target), headers: server.device(target))
            #expect(malformed.status == .badRequest && refusal(malformed).cause == "malformedAnonymousID")

            // An anonymous ID the server never saw: answered, nothing recorded, no event.
            let unseen = AnonymousAppUserID.make()
            let claimed = try await server.post(
                "/v1/customers/\(KakinRoute.encode(unseen))/alias",
                CustomerAliasRequest(bundleId: AttackedServer.bundleID, appUserId: target), headers: server.device(target))
            #expect(claimed.status == .ok)
            #expect(try await server.ledger.aliasedCustomer(bundleID: AttackedServer.bundleID, anonymousID: unseen) == nil)

            // Legitimate: what an anonymous customer bought moves at log-in.
            let anonymous = AnonymousAppUserID.make()
            let (_, jws) = try await server.buy("removeAd", tester: "member-account")
            #expect(try await server.upload(jws, for: anonymous).status == (setup == .recommended ? .forbidden : .ok))
            if setup == .defaults {
                let login = try await server.post(
                    "/v1/customers/\(KakinRoute.encode(anonymous))/alias",
                    CustomerAliasRequest(bundleId: AttackedServer.bundleID, appUserId: target),
                    headers: server.device(target))
                #expect(login.status == .ok)
                #expect(try await server.entitlements(of: target).map(\.identifier) == ["removeAds"])
            }
            if setup == .recommended {
                // Anonymous customers are on no allow list: under one, an app sells to signed-in
                // customers. The log-in of a customer who needs a token, without it: refused.
                let noToken = try await server.post(
                    "/v1/customers/\(KakinRoute.encode(anonymous))/alias",
                    CustomerAliasRequest(bundleId: AttackedServer.bundleID, appUserId: target),
                    headers: server.device())
                #expect(noToken.status == .unauthorized)
            }
            // Full anonymous IDs appear in no log line and no webhook event.
            for id in [unseen, anonymous] { #expect(!server.logs.contain(id)) }
            let events = try await server.ledger.dueEvents(endpoint: "https://hooks.example", now: Date(), limit: 100)
            for event in events {
                let posted = String(decoding: WebhookDispatcher.body(event), as: UTF8.self)
                #expect(!posted.contains(unseen) && !posted.contains(anonymous))
            }
            if setup == .defaults {
                // What the anonymous customer bought is still told, under the short digest.
                #expect(events.contains { event in
                    String(decoding: WebhookDispatcher.body(event), as: UTF8.self)
                        .contains(CustomerIDRedaction.redacted(anonymous))
                })
            }
        }
    }
}

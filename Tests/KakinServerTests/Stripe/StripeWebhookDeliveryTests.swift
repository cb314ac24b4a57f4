import Foundation
import Hummingbird
import HummingbirdTesting
import KakinTestSupport
import Testing

@testable import KakinServer

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite(
    "Stripe webhooks: delivered by the emulator", .enabled(if: StripeEmulator.available, StripeEmulator.skipMessage),
    .timeLimit(.minutes(1)))
struct StripeWebhookDeliveryTests {
    /// What the endpoint made of one delivery: the event, or why its signature was refused.
    typealias Delivery = Result<StripeEvent, StripeSignature.Failure>

    @Test func theEmulatorsSignatureIsAcceptedUnderItsSecretOnlyAndTheEventReadWhole() async throws {
        let emulator = try #require(StripeEmulator.url)
        let secret = "whsec_\(UUID().uuidString)"
        let verifier = StripeSignature(secrets: [secret])
        let (deliveries, delivered) = AsyncStream<Delivery>.makeStream()

        let router = Router()
        router.post("stripe") { request, _ -> Response in
            let body = Data(buffer: try await request.body.collect(upTo: 1 << 20))
            do {
                try verifier.verify(header: request.headers[.init("Stripe-Signature")!], body: body, now: Date())
                delivered.yield(.success(try StripeEvent(json: body)))
                return Response(status: .ok)
            } catch let failure as StripeSignature.Failure {
                delivered.yield(.failure(failure))
                return Response(status: .badRequest)
            }
        }
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await app.test(.live) { client in
            let endpoint = "http://127.0.0.1:\(try #require(client.port))/stripe"
            // Two endpoints on the emulator post to this one: one signs with its secret, one with another.
            let tag = UUID().uuidString
            try await Self.configureWebhook(emulator, id: "right-\(tag)", url: endpoint, secret: secret)
            try await Self.configureWebhook(emulator, id: "wrong-\(tag)", url: endpoint, secret: "whsec_other")
            let client = StripeClient(secretKey: StripeEmulator.secretKey, baseURL: emulator)
            let customerID = try await client.createCustomer(email: "\(tag)@example.com").id

            // Every endpoint the emulator knows gets every event; this test's are those of its customer.
            var accepted: [StripeEvent] = []
            var refused: [StripeSignature.Failure] = []
            for await delivery in deliveries {
                switch delivery {
                case .success(let event) where event.objectID == customerID: accepted.append(event)
                case .success: continue
                case .failure(let failure): refused.append(failure)
                }
                if !accepted.isEmpty && !refused.isEmpty { break }
            }
            let event = try #require(accepted.first)
            #expect(event.type == "customer.created")
            #expect(event.objectType == "customer")
            #expect(event.id.hasPrefix("evt_"))
            #expect(event.object["email"]?.stringValue == "\(tag)@example.com")
            #expect(refused.first == .signatureMismatch)
        }
    }

    /// Has the emulator post its `customer.created` events to `url`, signed with `secret`
    /// (localstripe's own configuration route, not Stripe's API).
    static func configureWebhook(_ emulator: URL, id: String, url: String, secret: String) async throws {
        var form = StripeForm()
        form.append(url, at: "url")
        form.append(secret, at: "secret")
        form.append(list: ["customer.created"], at: "events")
        var request = URLRequest(url: emulator.appendingPathComponent("_config/webhooks/\(id)"))
        request.httpMethod = "POST"
        request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(form.body.utf8)
        let (data, response) = try await URLSession.shared.data(for: request)
        #expect((response as? HTTPURLResponse)?.statusCode == 200, "\(String(decoding: data, as: UTF8.self))")
    }
}

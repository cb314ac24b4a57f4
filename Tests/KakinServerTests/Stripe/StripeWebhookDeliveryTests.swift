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
            try await Self.post(emulator, "/_config/webhooks/right-\(tag)", ["url": endpoint, "secret": secret, "events[]": "customer.created"])
            try await Self.post(emulator, "/_config/webhooks/wrong-\(tag)", ["url": endpoint, "secret": "whsec_other", "events[]": "customer.created"])
            let customer = try await Self.post(emulator, "/v1/customers", ["email": "\(tag)@example.com"])
            let customerID = try #require(customer["id"] as? String)

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

    /// Posts `form` to the emulator with a test key and returns its JSON object (empty when none).
    @discardableResult
    static func post(_ emulator: URL, _ path: String, _ form: [String: String]) async throws -> [String: Any] {
        var request = URLRequest(url: emulator.appendingPathComponent(path))
        request.httpMethod = "POST"
        request.setValue("Bearer sk_test_kakin", forHTTPHeaderField: "Authorization")
        request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        request.httpBody = Data(
            form.map { key, value in
                "\(key.addingPercentEncoding(withAllowedCharacters: allowed)!)=\(value.addingPercentEncoding(withAllowedCharacters: allowed)!)"
            }.joined(separator: "&").utf8)
        let (data, response) = try await URLSession.shared.data(for: request)
        #expect((response as? HTTPURLResponse)?.statusCode == 200, "\(path): \(String(decoding: data, as: UTF8.self))")
        return (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
    }
}

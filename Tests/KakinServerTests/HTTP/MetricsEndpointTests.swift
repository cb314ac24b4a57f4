import AppStoreModels
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import KakinLedger
import KakinServer
import KakinTestSupport
import Testing

/// `GET /v1/metrics/{metric}`: the same series as JSON and CSV, for the secret key only, with
/// clear errors for a bad query.
@Suite struct MetricsEndpointTests {
    static let day: TimeInterval = 86_400
    static let secret: HTTPFields = [.authorization: "Bearer sk_test"]

    static func object(_ buffer: ByteBuffer) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(buffer: buffer))) as? [String: Any] ?? [:]
    }

    static func date(_ offset: TimeInterval) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withFullDate]
        return formatter.string(from: ServerFixture.start.addingTimeInterval(offset))
    }

    @Test("a trial that converts, seen day by day as JSON and as CSV")
    func seriesAsJSONAndCSV() async throws {
        let fixture = try await ServerFixture()
        let (_, jws) = try await fixture.buy("premium.monthly", tester: "ann")
        _ = try await fixture.service.submit(jws, bundleID: ServerFixture.bundleID, appUserID: "ann")
        // The free week ends and the first paid month starts, notified as the App Store does.
        try await fixture.engine.advanceClock(by: 10 * Self.day)
        for record in try await fixture.engine.queueNotifications() {
            _ = try await fixture.service.receiveNotification(ResponseBodyV2(signedPayload: record.signedPayload))
        }
        #expect(try await fixture.service.updateMetrics() == 1)
        #expect(try await fixture.service.updateMetrics() == 0)

        let range = "bundleId=\(ServerFixture.bundleID)&environment=Sandbox&from=\(Self.date(0))&to=\(Self.date(9 * Self.day))"
        try await Application(router: fixture.http.router()).test(.router) { client in
            let active = try await client.execute(uri: "/v1/metrics/active_subscriptions?\(range)", method: .get, headers: Self.secret)
            #expect(active.status == .ok)
            let series = try #require((Self.object(active.body)["series"] as? [[String: Any]])?.first)
            let values = (series["points"] as? [[String: Any]])?.compactMap { $0["value"] as? Double }
            // Paid from the end of the trial week (the purchase was at 17:46 UTC on day 0).
            #expect(values == [0, 0, 0, 0, 0, 0, 0, 1, 1, 1])

            let trials = try await client.execute(uri: "/v1/metrics/active_trials?\(range)&granularity=week", method: .get, headers: Self.secret)
            let weekly = (Self.object(trials.body)["series"] as? [[String: Any]])?.first?["points"] as? [[String: Any]]
            #expect(weekly?.first?["period"] as? String == Self.date(0))

            let csv = try await client.execute(
                uri: "/v1/metrics/trial_conversion?\(range)&granularity=month", method: .get,
                headers: Self.secret + [.accept: "text/csv"])
            #expect(csv.headers[.contentType] == "text/csv; charset=utf-8")
            let lines = String(buffer: csv.body).split(separator: "\r\n").map(String.init)
            #expect(lines.first == "period,product,storefront,store,currency,value,started,converted,cancelled,pending")
            #expect(lines.count == 2 && lines[1].hasSuffix(",1,1,1,0,0"))

            let revenue = try await client.execute(
                uri: "/v1/metrics/revenue?\(range)&breakdown=storefront&format=csv", method: .get, headers: Self.secret)
            let rows = String(buffer: revenue.body).split(separator: "\r\n").dropFirst()
            #expect(rows.contains { $0.hasPrefix(Self.date(7 * Self.day)) && $0.contains(",USA,,USD,") && !$0.hasSuffix(",0") })
        }
        try await fixture.store.shutdown()
    }

    @Test("the publishable key, an unknown metric and a bad range are refused with a clear error")
    func refusals() async throws {
        let fixture = try await ServerFixture()
        try await Application(router: fixture.http.router()).test(.router) { client in
            let base = "/v1/metrics/mrr?bundleId=\(ServerFixture.bundleID)"
            let publishable = try await client.execute(
                uri: base, method: .get, headers: [HTTPField.Name("X-Kakin-Key")!: "pk_test"])
            #expect(publishable.status == .unauthorized || publishable.status == .forbidden)
            let unknown = try await client.execute(
                uri: "/v1/metrics/happiness?bundleId=\(ServerFixture.bundleID)", method: .get, headers: Self.secret)
            #expect(unknown.status == .notFound)
            for query in ["&from=2026-02-30", "&from=2026-03-02&to=2026-03-01", "&granularity=hour", "&breakdown=color",
                "&from=2000-01-01&to=2026-01-01", "&environment=Xcode", "&format=xml"]
            {
                let bad = try await client.execute(uri: base + query, method: .get, headers: Self.secret)
                #expect(bad.status == .badRequest, "\(query)")
                let error = Self.object(bad.body)["error"] as? [String: Any]
                #expect((error?["message"] as? String)?.isEmpty == false)
            }
            // With nothing recorded: one series of zeros in every currency it knows (none).
            let empty = try await client.execute(uri: base, method: .get, headers: Self.secret)
            #expect(empty.status == .ok)
            #expect((Self.object(empty.body)["series"] as? [Any])?.isEmpty == true)
        }
        try await fixture.store.shutdown()
    }
}

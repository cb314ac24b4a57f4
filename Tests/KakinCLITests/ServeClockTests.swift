import Foundation
import KakinTestSupport
import Testing

@testable import KakinCLI

/// `kakin serve` runs one clock: the purchase server's ledger follows the embedded sandbox's, so
/// moving the sandbox clock moves what the server says depends on "now".
@Suite struct ServeClockTests {
    @Test func theServedLedgerFollowsTheSandboxClock() async throws {
        let scratch = try ScratchDirectory()
        let options = try #require(
            try KakinCommand.parseAsRoot([
                "serve", "--data", scratch.path("data"),
                "--catalog", ServeRevocationTests.examples.appendingPathComponent("Kakin.storekit").path,
                "--grants", ServeRevocationTests.examples.appendingPathComponent("Kakin.grants.json").path,
            ]) as? ServeCommand
        ).resolvedOptions(environment: [:])
        let environment = try await ServeEnvironment.make(options)
        let dependencies = environment.serverDependencies()
        let clock = environment.sandbox.engine.clock
        clock.setMode(.manual)
        clock.advance(by: 40 * 86_400)
        #expect(dependencies.now() == clock.now(), "the ledger's clock is the sandbox's")
        let realNow = try #require(dependencies.realNow)
        #expect(abs(realNow().timeIntervalSinceNow) < 60, "tokens and certificates keep real time")
    }

    /// Through the `kakin serve` process: a free trial the customer cancelled is still active on
    /// the real clock, and has ended once the sandbox clock moved a month on.
    @Test(.enabled(if: BinaryTests.binary != nil, "the kakin binary is not built (swift build); skipped"))
    func aTrialEndsWhenTheSandboxClockMovesAMonth() async throws {
        let scratch = try ScratchDirectory()
        let serve = try await ServeRevocationTests.Serve(data: scratch.path("data"), arguments: [])
        defer { _ = serve.process.stop() }
        let added = try await exchange(
            "POST", "\(serve.sandbox)/v1/control/testers", json: ["name": "trial", "id": "trial"])
        #expect(added.status == 200 || added.status == 201, "\(added.body)")
        let payment = try await exchange(
            "POST", "\(serve.sandbox)/v1/device/payments",
            json: ["testerID": "trial", "productID": "com.example.kakin.premium.monthly"])
        let transaction = try #require(payment.body["transaction"] as? [String: Any], "\(payment.body)")
        let jws = try #require(transaction["jwsRepresentation"] as? String)
        let payload = try #require(transaction["transaction"] as? [String: Any], "\(transaction)")
        let original = try #require(payload["originalTransactionId"] as? String)
        #expect(try await serve.upload(jws, for: "subscriber").status == 200)

        func premium() async throws -> [String: Any] {
            let answer = try await exchange(
                "GET", "\(serve.server)/v1/customers/subscriber?bundleId=\(ServerCommandTests.bundleID)",
                headers: ["X-Kakin-Key": serve.publishable])
            #expect(answer.status == 200, "\(answer.body)")
            let customer = answer.body["customer"] as? [String: Any] ?? answer.body
            let entitlements = try #require(customer["entitlements"] as? [[String: Any]], "\(answer.body)")
            return try #require(entitlements.first { $0["identifier"] as? String == "premium" })
        }
        var entitlement = try await premium()
        #expect(entitlement["isActive"] as? Bool == true && entitlement["periodType"] as? String == "trial")

        // The customer cancels during the trial; a month later on the sandbox clock it has ended.
        let cancelled = try await exchange(
            "POST", "\(serve.sandbox)/v1/control/subscriptions/\(original)/auto-renew/off")
        #expect(cancelled.status == 204 || cancelled.status == 200, "\(cancelled.body)")
        let moved = try await exchange("POST", "\(serve.sandbox)/v1/control/clock", json: ["advanceSeconds": 31 * 86_400])
        #expect(moved.status == 200, "\(moved.body)")
        entitlement = try await premium()
        #expect(entitlement["isActive"] as? Bool == false, "\(entitlement)")
    }
}

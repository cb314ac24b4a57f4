import Foundation
import Kakin
import KakinWire
import Testing

/// Anonymous customers through a real `kakin serve`: an app configured without an app user ID buys
/// with the SDK (through the sandbox App Store), logs in, and finds what it bought under the
/// identified customer, once; logging in again changes nothing; logging out starts a new
/// anonymous customer.
@MainActor @Suite struct ServeIdentityTests {
    @Test(.enabled(if: BinaryTests.binary != nil, "the kakin binary is not built (swift build); skipped"))
    func aPurchaseMadeAnonymouslySurvivesLogIn() async throws {
        let scratch = try ScratchDirectory()
        let serve = try await ServeRevocationTests.Serve(data: scratch.path("data"), arguments: [])
        defer { _ = serve.process.stop() }
        let serverURL = try #require(URL(string: serve.server))
        let sandboxURL = try #require(URL(string: serve.sandbox))
        let added = try await exchange(
            "POST", "\(serve.sandbox)/v1/control/testers", json: ["name": "anna@example.com", "id": "anna"])
        #expect(added.status == 200 || added.status == 201, "\(added.body)")
        let serverKey = try await KakinServerClient.fetchServerKey(baseURL: serverURL)
        let device = URL(fileURLWithPath: scratch.path("device"))
        let deviceID = UUID()
        func launch() async throws -> KakinStore {
            try await KakinStore.configure(
                .init(
                    serverURL: serverURL, bundleID: ServerCommandTests.bundleID, publishableKey: serve.publishable,
                    serverKey: serverKey, storageDirectory: device),
                backend: SandboxBackend(baseURL: sandboxURL, testerID: "anna", deviceID: deviceID, pollSeconds: 1))
        }

        // No app user ID: an anonymous customer, kept by the device across launches.
        var app = try await launch()
        let anonymous = app.appUserID
        #expect(app.isAnonymous && anonymous.hasPrefix("$kakin_anon_") && anonymous.count == 12 + 32)
        await app.shutdown()
        app = try await launch()
        #expect(app.appUserID == anonymous, "the same device keeps its anonymous customer")

        await app.loadProducts(["com.example.kakin.removeAd", "com.example.kakin.increasePoints"])
        #expect(app.products.count == 2, "\(app.invalidProducts)")
        for product in app.products {
            guard case .purchased(_, let customer) = try await app.purchase(product) else {
                Issue.record("\(product.id) was not bought")
                return
            }
            if let customer {
                #expect(customer.appUserID == anonymous)
            } else {
                // The server did not answer in time (a loaded machine): the purchase is queued; send it now.
                _ = await app.payments.deliverPending()
                #expect(await app.payments.pendingDeliveries().isEmpty, "\(product.id) was not delivered")
            }
        }
        await app.refreshCustomerInfo()
        #expect(app.customerInfo?.isEntitled(to: "removeAds") == true)
        #expect(app.customerInfo?.balances["points"] == 100)

        // Logging in moves the purchase and the points to the identified customer, once.
        let identified = try await app.logIn("anna-account")
        #expect(app.appUserID == "anna-account" && !app.isAnonymous)
        #expect(identified.appUserID == "anna-account")
        #expect(identified.isEntitled(to: "removeAds"))
        #expect(identified.balances == ["points": 100], "moved, not doubled")
        #expect(app.customerInfo == identified)
        let server = app.server
        let read = try await server.customer(appUserID: "anna-account")
        #expect(read.isEntitled(to: "removeAds") && read.balances == ["points": 100])
        let oldID = try await server.customer(appUserID: anonymous)
        #expect(oldID.appUserID == "anna-account", "the anonymous ID now reads the identified customer")

        // Again, from the app and at the server: nothing changes.
        #expect(try await app.logIn("anna-account") == identified)
        let repeated = try await server.logIn(anonymousID: anonymous, as: "anna-account")
        #expect(repeated.balances == ["points": 100] && repeated.isEntitled(to: "removeAds"))
        // The anonymous customer became anna-account: it cannot become someone else.
        do {
            _ = try await server.logIn(anonymousID: anonymous, as: "someone-else")
            Issue.record("a second target was accepted")
        } catch let error as KakinError {
            #expect(error.code == .serverRejected && error.serverCode == "conflict")
            #expect(error.cause == "aliasedToAnotherCustomer")
        }

        // A purchase after the log-in is the identified customer's.
        let points = try #require(app.products.first { $0.id == "com.example.kakin.increasePoints" })
        guard case .purchased(_, let after?) = try await app.purchase(points) else {
            Issue.record("the purchase after logging in was not delivered")
            return
        }
        #expect(after.appUserID == "anna-account" && after.balances == ["points": 200])

        // The device keeps the identified customer across launches.
        await app.shutdown()
        app = try await launch()
        #expect(app.appUserID == "anna-account")

        // Logging out starts a fresh anonymous customer with nothing; a second log-out is refused.
        let fresh = try await app.logOut()
        #expect(app.isAnonymous && app.appUserID != anonymous && app.appUserID.hasPrefix("$kakin_anon_"))
        #expect(fresh.appUserID == app.appUserID && fresh.balances.isEmpty && !fresh.isEntitled(to: "removeAds"))
        do {
            _ = try await app.logOut()
            Issue.record("logging out an anonymous customer was accepted")
        } catch {
            #expect(error == .notLoggedIn)
        }
        // The identified customer still has everything.
        let back = try await app.logIn("anna-account")
        #expect(back.balances == ["points": 200] && back.isEntitled(to: "removeAds"))
        await app.shutdown()
    }
}

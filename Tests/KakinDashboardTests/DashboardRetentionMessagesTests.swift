import AppStoreModels
import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import KakinTestSupport
import Testing

@testable import KakinDashboard
@testable import KakinServer
@testable import StoreSandbox

/// `/dashboard/retention/messages`: the sandbox's Retention Messaging API managed from the
/// dashboard, for the apps the session opens only.
@Suite struct DashboardRetentionMessagesTests {
    static let page = "/dashboard/retention/messages"
    static let action = "/dashboard/retention/messages/action"
    static let existing = "6f1c2a9e-0b7d-4c4e-9a55-2f3e1d0c9b8a"

    /// A four-app deployment whose apps A and B reach a sandbox serving the Retention Messaging
    /// API on a free port; `body` gets the dashboard's router and the sandbox.
    static func withDeployment(
        _ body: @Sendable (Router<KakinRequestContext>, SandboxService) async throws -> Void
    ) async throws {
        let key = P256.Signing.PrivateKey()
        let catalog = try ExampleApp.catalog()
        let engine = try ExampleSandbox.engine(
            catalog: catalog, authority: ServerFixture.authority, clock: .manual(at: ServerFixture.start))
        let sandbox = SandboxService(
            engine: engine, catalog: catalog,
            configuration: .init(apiKeys: [.init(keyID: "KEY", issuerID: "issuer", publicKey: key.publicKey)]))
        try await sandbox.retention.uploadMessage(
            existing, UploadMessageRequestBody(header: "Stay", body: "Every feature stays."),
            bundleID: engine.signer.bundleID)
        let app = Application(router: sandbox.router(), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await app.test(.live) { http in
            let port = try #require(http.port)
            let access = ServerAPIAccess(
                baseURL: URL(string: "http://127.0.0.1:\(port)")!, keyID: "KEY", issuerID: "issuer", privateKey: key)
            try await withLedgerStore(.memory) { store in
                let deployment = try await FourAppDeployment(
                    store: store, serverAPI: access, exchange: URLSessionExchange())
                try await body(try deployment.router(), sandbox)
            }
        }
    }

    @Test("the page lists the sandbox's messages, and a posted message appears in the list")
    func listAndUpload() async throws {
        try await Self.withDeployment { router, sandbox in
            try await Application(router: router).test(.router) { client in
                var browser = Browser()
                let csrf = try #require(try await browser.signIn(DashboardAccessTests.keyA, client))
                let page = String(buffer: try await browser.get(Self.page, client).body)
                #expect(page.contains("<h2>\(FourAppDeployment.appA) <span class=\"badge\">sandbox</span></h2>"))
                #expect(page.contains("<code>\(Self.existing)</code>"))
                #expect(page.contains("APPROVED"))
                #expect(!page.contains(FourAppDeployment.appB), "B is not this session's")

                let preview = String(
                    buffer: try await browser.get(
                        "\(Self.page)?app=\(FourAppDeployment.appA)&header=Before+you+go&body=Half+price.", client
                    ).body)
                #expect(preview.contains("<p>Before you go</p>"))
                #expect(preview.contains("Upload this message"))

                let uploaded = try await browser.post(
                    Self.action,
                    [
                        "csrf": csrf, "app": FourAppDeployment.appA, "environment": "sandbox",
                        "action": "upload-message",
                        "header": "Before you go", "body": "Half price for three months.",
                    ],
                    client)
                #expect(uploaded.status == .seeOther)
                #expect(uploaded.headers[.location]?.contains("notice=") == true, "\(uploaded.headers)")
                let messages = await sandbox.retention.messageList().messageIdentifiers ?? []
                #expect(messages.count == 2)
                let new = try #require(messages.last?.messageIdentifier)
                #expect(await sandbox.retention.message(new)?.header == "Before you go")
                let after = String(buffer: try await browser.get(Self.page, client).body)
                #expect(after.contains("<code>\(new)</code>"))

                // Apple's refusal comes back as the page's problem, with its code.
                let refused = try await browser.post(
                    Self.action,
                    ["csrf": csrf, "app": FourAppDeployment.appA, "action": "delete-image", "id": UUID().uuidString],
                    client)
                #expect(refused.headers[.location]?.contains("problem=") == true)
                #expect(refused.headers[.location]?.contains("\(APIErrorCode.imageNotFound.rawValue)") == true)
            }
        }
    }

    @Test("a session without the app neither sees nor changes its messages; a form without the CSRF token is refused")
    func scopeAndCSRF() async throws {
        try await Self.withDeployment { router, sandbox in
            try await Application(router: router).test(.router) { client in
                // C and D have no In-App Purchase key: their session sees no app here.
                var shared = Browser()
                let sharedCSRF = try #require(try await shared.signIn(FourAppDeployment.sharedSecret, client))
                let page = String(buffer: try await shared.get(Self.page, client).body)
                #expect(!page.contains(Self.existing))
                #expect(page.contains("No app this session opens has an In-App Purchase key"))
                let foreign = try await shared.post(
                    Self.action,
                    [
                        "csrf": sharedCSRF, "app": FourAppDeployment.appA, "action": "delete-message",
                        "id": Self.existing,
                    ],
                    client)
                #expect(foreign.status == .notFound)

                // B's session names A's app: not found, nothing sent.
                var asB = Browser()
                let csrfB = try #require(try await asB.signIn(DashboardAccessTests.keyB, client))
                let crossed = try await asB.post(
                    Self.action,
                    ["csrf": csrfB, "app": FourAppDeployment.appA, "action": "delete-message", "id": Self.existing],
                    client)
                #expect(crossed.status == .notFound)

                var asA = Browser()
                _ = try #require(try await asA.signIn(DashboardAccessTests.keyA, client))
                let forged = try await asA.post(
                    Self.action, ["app": FourAppDeployment.appA, "action": "delete-message", "id": Self.existing],
                    client)
                #expect(forged.status == .forbidden)
                #expect(await sandbox.retention.message(Self.existing) != nil, "nothing was deleted")
            }
        }
    }

    @Test("the rules preview form answers what the configured rules would show")
    func rulesPreview() async throws {
        try await Self.withDeployment { router, _ in
            try await Application(router: router).test(.router) { client in
                var browser = Browser()
                _ = try #require(try await browser.signIn(DashboardAccessTests.keyA, client))
                let page = String(
                    buffer: try await browser.get(
                        "\(Self.page)?app=\(FourAppDeployment.appA)&transaction=404&previewLocale=en-US", client
                    ).body)
                #expect(page.contains("the ledger knows no subscription 404 of \(FourAppDeployment.appA)"))
                #expect(page.contains("No rules are configured"))
            }
        }
    }
}

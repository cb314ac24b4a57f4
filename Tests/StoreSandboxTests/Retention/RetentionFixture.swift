import AppStoreModels
import Foundation
import KakinTestSupport
import Testing

@testable import StoreSandbox

/// Answers `Get Retention Message` requests in-process, recording what it was sent.
actor ScriptedRetentionTransport: RetentionRequestTransport {
    enum Script: Sendable {
        case answer(Int, Data)
        case never
        case fail
    }

    let script: Script
    var bodies: [Data] = []

    init(_ script: Script) {
        self.script = script
    }

    func post(_ body: Data, to url: URL) async throws -> (status: Int, body: Data) {
        bodies.append(body)
        switch script {
        case .answer(let status, let data): return (status, data)
        case .never:
            try await RetentionTesting.untilCancelled()
            return (0, Data())
        case .fail: throw URLError(.cannotConnectToHost)
        }
    }

    /// The `signedPayload` of every request, in order.
    var signedPayloads: [String] {
        bodies.compactMap { try? JSONDecoder().decode(RealtimeRequestBody.self, from: $0).signedPayload }
    }
}

/// A sandbox with the example catalog, one tester subscribed monthly, an approved message with
/// an approved image, and a default message for the subscription in `en-US`.
struct RetentionFixture {
    static let messageID = "6f1c2a9e-0b7d-4c4e-9a55-2f3e1d0c9b8a"
    static let defaultID = "0d3c8a51-57f4-4a8e-8f4e-2b6a1c9d7e30"
    static let imageID = "a1b2c3d4-e5f6-7890-a1b2-c3d4e5f67890"
    static let monthly = ExampleApp.productID("premium.monthly")
    static let url = URL(string: "https://retention.example/apple")!

    let engine: SandboxEngine
    let retention: SandboxRetention
    let subscription: SandboxTransaction

    init(
        transport: any RetentionRequestTransport, timing: RetentionTiming,
        configuration: SandboxRetention.Configuration = .init(), url: URL? = Self.url
    ) async throws {
        let catalog = try ExampleApp.catalog()
        engine = try ExampleSandbox.engine(
            catalog: catalog, authority: EngineFixture.authority, clock: .manual(at: EngineFixture.start))
        let tester = try await engine.createTester(name: "retention@example.com")
        subscription = try #require(
            try await engine.purchase(.init(testerID: tester.id, productID: Self.monthly)).transaction)
        retention = SandboxRetention(engine: engine, transport: transport, timing: timing, configuration: configuration)
        let app = engine.signer.bundleID
        try await retention.uploadImage(Self.imageID, png: RetentionTesting.png(), size: .fullSize, bundleID: app)
        try await retention.uploadMessage(
            Self.messageID,
            UploadMessageRequestBody(
                header: "Before you go", body: "Three months at half price.",
                image: UploadMessageImage(imageIdentifier: Self.imageID, altText: "A flame")),
            bundleID: app)
        try await retention.uploadMessage(
            Self.defaultID, UploadMessageRequestBody(header: "Stay", body: "Every feature stays."), bundleID: app)
        try await retention.configureDefaultMessage(
            productID: Self.monthly, locale: "en-US", DefaultConfigurationRequest(messageIdentifier: Self.defaultID),
            bundleID: app)
        if let url {
            try await retention.configureRealtimeURL(RealtimeURLRequest(realtimeURL: url.absoluteString), bundleID: app)
        }
    }
}

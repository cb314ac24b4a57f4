import AppStoreModels
import Foundation
import KakinTestSupport
import Testing

@testable import StoreSandbox

/// What apps upload through the Retention Messaging API outlives the sandbox once it is kept in a
/// file: a sandbox started again on it has the same messages, images, defaults and URL.
@Suite struct RetentionUploadsTests {
    @Test func aSandboxStartedAgainHasWhatWasUploaded() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("retention.json")
        let fixture = try await RetentionFixture(
            transport: ScriptedRetentionTransport(.fail), timing: .stepping(.milliseconds(1)), url: nil)
        let app = fixture.engine.signer.bundleID

        let first = SandboxRetention(engine: fixture.engine)
        try await first.keepUploads(in: file)
        #expect(!FileManager.default.fileExists(atPath: file.path), "nothing is written before an upload")
        try await first.uploadImage(
            RetentionFixture.imageID, png: RetentionTesting.png(), size: .fullSize, bundleID: app)
        try await first.uploadMessage(
            RetentionFixture.messageID,
            UploadMessageRequestBody(
                header: "Before you go", body: "Three months at half price.",
                image: UploadMessageImage(imageIdentifier: RetentionFixture.imageID, altText: "A flame")),
            bundleID: app)
        try await first.uploadMessage(
            RetentionFixture.defaultID, UploadMessageRequestBody(header: "Stay", body: "Every feature stays."),
            bundleID: app)
        try await first.configureDefaultMessage(
            productID: RetentionFixture.monthly, locale: "en-US",
            DefaultConfigurationRequest(messageIdentifier: RetentionFixture.defaultID), bundleID: app)
        try await first.configureRealtimeURL(
            RealtimeURLRequest(realtimeURL: RetentionFixture.url.absoluteString), bundleID: app)
        #expect(await first.setReviewState(message: RetentionFixture.defaultID, .rejected))

        let again = SandboxRetention(engine: fixture.engine)
        try await again.keepUploads(in: file)
        #expect(await again.messageList() == first.messageList())
        #expect(await again.messageList().messageIdentifiers?.last?.messageState == .rejected)
        #expect(await again.imageList() == first.imageList())
        #expect(await again.message(RetentionFixture.messageID)?.header == "Before you go")
        #expect(
            try await again.defaultMessage(productID: RetentionFixture.monthly, locale: "en-US", bundleID: app)
                .messageIdentifier == RetentionFixture.defaultID)
        #expect(await again.realtimeURL() == RetentionFixture.url)

        // A deletion is kept too, and an upload after a restart follows the ones before it.
        try await again.deleteMessage(RetentionFixture.defaultID, bundleID: app)
        try await again.uploadMessage(
            "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d", UploadMessageRequestBody(header: "New", body: "Later."),
            bundleID: app)
        let third = SandboxRetention(
            engine: fixture.engine, configuration: .init(realtimeURL: URL(string: "http://127.0.0.1:8080/v1/retention/apple")))
        try await third.keepUploads(in: file)
        #expect(
            await third.messageList().messageIdentifiers?.map(\.messageIdentifier)
                == [RetentionFixture.messageID, "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"])
        #expect(
            await third.realtimeURL()?.absoluteString == "http://127.0.0.1:8080/v1/retention/apple",
            "the configured URL wins over the saved one")

        try Data("not json".utf8).write(to: file)
        await #expect(throws: (any Error).self) { try await SandboxRetention(engine: fixture.engine).keepUploads(in: file) }
    }
}

import Foundation
import Kakin
import KakinShopModel
import Testing

/// Hosted content, against a real `kakin serve`: the app's backend uploads a product's package to
/// the purchase server (secret key); a purchase downloads it in chunks with progress before the
/// transaction is finished; content deleted from the device downloads again.
@MainActor @Suite(.enabled(if: KakinServe.executable != nil, KakinServe.absent))
struct ShopContentLiveTests {
    /// What the app's backend does once per version: `PUT /v1/content/{product}` with the secret key.
    static func upload(_ package: Data, to serve: KakinServe) async throws {
        var components = URLComponents(
            url: serve.serverURL.appendingPathComponent("v1/content/\(Catalog.soundPack)"), resolvingAgainstBaseURL: false)!
        components.queryItems = [.init(name: "bundleId", value: KakinServe.bundleID), .init(name: "version", value: "1.0")]
        let answer = try await exchange(
            "PUT", try #require(components.url), headers: ["Authorization": "Bearer \(serve.secretKey)"], body: package)
        #expect(answer.status == 201, "\(answer.text)")
    }

    @Test func aPurchaseDownloadsItsContentWithProgress() async throws {
        try await KakinServe.with { serve in
            var random = SystemRandomNumberGenerator()
            let package = Data((0..<(640 * 1024)).map { _ in UInt8.random(in: 0...255, using: &random) })
            try await Self.upload(package, to: serve)
            try await SandboxControl(serve: serve).addTester("sora")
            try await serve.withShop(tester: "sora", device: "phone") { shop in
                let manager = try #require(shop.downloadManager)
                let before = try #require(shop.contentItems.first)
                #expect(before.id == Catalog.soundPack && !before.isOwned && !before.canDownload)

                // The same events the shop follows, recorded until the download finished.
                let events = await manager.events()
                let progress = Task {
                    var seen: [Float] = []
                    for await event in events where event.download.productID == Catalog.soundPack {
                        seen.append(event.progress)
                        if event.state.isTerminal { break }
                    }
                    return seen
                }
                guard case .purchased(_, _?) = await shop.purchase(try shop.product(Catalog.soundPack)) else {
                    Issue.record("soundPack was not granted: \(shop.notice?.message ?? "")")
                    return
                }
                // The transaction is finished only after its content is on the device.
                let seen = await progress.value
                #expect(seen.last == 1)
                #expect(seen.filter { $0 > 0 && $0 < 1 }.count >= 5, "progress in 64 KiB chunks: \(seen)")
                #expect(seen == seen.sorted(), "progress only grows")
                try await waitUntil("the shop shows the content on the device") {
                    shop.contentItems.first?.contentURL != nil
                }
                let item = try #require(shop.contentItems.first)
                #expect(item.isOwned && item.download?.state == .finished && !item.canDownload)
                let folder = try #require(item.contentURL)
                #expect(try Data(contentsOf: folder.appendingPathComponent("content.bin")) == package)

                // Deleted from the device (the caches were purged): downloaded again, as the customer owns it.
                await shop.deleteContent(Catalog.soundPack)
                #expect(shop.contentItems.first?.canDownload == true)
                shop.dismissNotice()
                await shop.download(Catalog.soundPack)
                #expect(shop.notice == nil, "\(shop.notice?.message ?? "")")
                try await waitUntil("the content is downloaded again") {
                    shop.contentItems.first?.contentURL != nil && shop.downloads[Catalog.soundPack]?.state == .finished
                }
                let again = try #require(shop.contentItems.first?.contentURL)
                #expect(try Data(contentsOf: again.appendingPathComponent("content.bin")) == package)
            }
        }
    }
}

import Kakin
import KakinShopModel
import SwiftUI

/// The products with hosted content: their downloads with progress and time remaining, pause,
/// resume and cancel, and what is on this device.
struct ContentDownloadsView: View {
    @Environment(ShopModel.self) private var model

    var body: some View {
        List(model.contentItems) { item in
            ContentRow(item: item)
        }
        .overlay {
            if model.contentItems.isEmpty {
                ContentUnavailableView(
                    "No downloadable content", systemImage: "arrow.down.circle",
                    description: Text("Products with hosted content appear here."))
            }
        }
        .navigationTitle("Downloads")
    }
}

/// One product's content: its state and the actions that apply.
struct ContentRow: View {
    @Environment(ShopModel.self) private var model
    let item: ContentItem

    var body: some View {
        VStack(alignment: .leading, spacing: 8) {
            HStack {
                Text(item.name).font(.headline)
                Spacer()
                actions
            }
            if let download = item.download, [.waiting, .active, .paused].contains(download.state) {
                ProgressView(value: Double(download.progress)) {
                    Text(download.state == .paused ? "Paused" : "Downloading")
                } currentValueLabel: {
                    Text(Self.remaining(download))
                }
            }
            if let url = item.contentURL {
                Label("On this device (version \(url.lastPathComponent))", systemImage: "checkmark.circle")
                    .font(.footnote)
            } else if !item.isOwned {
                Text("Buy it in the shop to download it.").font(.footnote).foregroundStyle(.secondary)
            }
            if let download = item.download, download.state == .failed, let error = download.error {
                Text(error.message).font(.footnote).foregroundStyle(.red)
            }
        }
        .buttonStyle(.borderless)
        .padding(.vertical, 4)
    }

    @ViewBuilder private var actions: some View {
        let state = item.download?.state
        if item.canDownload {
            Button("Download", systemImage: "arrow.down.circle") { Task { await model.download(item.id) } }
        }
        if state == .active || state == .waiting {
            Button("Pause", systemImage: "pause.circle") { Task { await model.pauseDownload(item.id) } }
        }
        if state == .paused {
            Button("Resume", systemImage: "play.circle") { Task { await model.resumeDownload(item.id) } }
        }
        if state == .active || state == .waiting || state == .paused {
            Button("Cancel", systemImage: "xmark.circle", role: .destructive) {
                Task { await model.cancelDownload(item.id) }
            }
        }
        if item.contentURL != nil {
            Button("Delete", systemImage: "trash", role: .destructive) { Task { await model.deleteContent(item.id) } }
        }
    }

    /// "12 s left", or nothing while the SDK cannot estimate it yet.
    static func remaining(_ download: ContentDownload) -> String {
        guard download.timeRemaining != ContentDownload.timeRemainingUnknown else { return "" }
        return "\(Int(download.timeRemaining.rounded())) s left"
    }
}

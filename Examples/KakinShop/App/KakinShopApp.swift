import CryptoKit
import Foundation
import Kakin
import KakinShopModel
import KakinStoreKit
import SwiftUI

/// Kakin Shop: a small store on the Kakin SDK, for iOS and macOS.
///
/// At launch it reads where to connect (``ShopSettings``: Info.plist, then the scheme's
/// environment), makes the store backend (StoreKit, or Kakin's sandbox App Store when
/// `KAKIN_SANDBOX_URL` is set) and configures the ``ShopModel`` that every screen reads.
@main
struct KakinShopApp: App {
    @State private var model = ShopModel()
    @State private var problem: String?
    @State private var started = false

    var body: some Scene {
        WindowGroup {
            RootView(problem: problem)
                .environment(model)
                .task { await open() }
        }
    }

    /// Configures the shop once, whatever the number of windows.
    private func open() async {
        guard !started else { return }
        started = true
        do {
            let settings = try ShopSettings(Self.settingsValues())
            let serverKey = try await Self.serverKey(settings)
            await model.configure(
                ShopConfiguration(
                    store: .init(
                        serverURL: settings.serverURL, bundleID: settings.bundleID,
                        publishableKey: settings.publishableKey, serverKey: serverKey)),
                backend: Self.backend(settings))
        } catch {
            problem = "\(error)"
        }
    }

    /// Info.plist's settings (from the build settings of the same names in project.yml), with
    /// the environment's over them (the scheme's Run › Arguments › Environment Variables).
    static func settingsValues() -> [String: String] {
        let keys = [
            ShopSettings.Key.serverURL, ShopSettings.Key.bundleID, ShopSettings.Key.publishableKey,
            ShopSettings.Key.serverKeyPEM, ShopSettings.Key.sandboxURL, ShopSettings.Key.sandboxTester,
        ]
        var values: [String: String] = [:]
        for key in keys {
            if let value = Bundle.main.object(forInfoDictionaryKey: key) as? String, !value.isEmpty {
                values[key] = value
            }
            if let value = ProcessInfo.processInfo.environment[key], !value.isEmpty { values[key] = value }
        }
        return values
    }

    /// The server's public key: the pinned PEM, or, without one, whatever the server answers at
    /// `GET /v1/server-key` (development only: it trusts the first server that answers).
    static func serverKey(_ settings: ShopSettings) async throws -> P256.Signing.PublicKey {
        if let pem = settings.serverKeyPEM { return try P256.Signing.PublicKey(pemRepresentation: pem) }
        return try await KakinServerClient.fetchServerKey(baseURL: settings.serverURL)
    }

    /// StoreKit on a device and in Xcode's StoreKit testing; Kakin's sandbox App Store when the
    /// settings name one (the same purchases, renewals and billing controls as the tests use).
    static func backend(_ settings: ShopSettings) -> any StoreBackend {
        guard let sandboxURL = settings.sandboxURL else { return StoreKitBackend() }
        return SandboxBackend(baseURL: sandboxURL, testerID: settings.sandboxTester, deviceID: sandboxDeviceID())
    }

    /// The sandbox's stand-in for `identifierForVendor`: one per installation, kept in the defaults.
    static func sandboxDeviceID() -> UUID {
        let key = "KakinShopSandboxDeviceID"
        if let text = UserDefaults.standard.string(forKey: key), let id = UUID(uuidString: text) { return id }
        let id = UUID()
        UserDefaults.standard.set(id.uuidString, forKey: key)
        return id
    }
}

/// The shop once it is open; a progress view or the reason it is not.
struct RootView: View {
    @Environment(ShopModel.self) private var model
    @Environment(\.scenePhase) private var scenePhase
    let problem: String?

    var body: some View {
        Group {
            if let problem {
                ContentUnavailableView("The shop cannot open", systemImage: "cart", description: Text(problem))
            } else {
                switch model.phase {
                case .notConfigured, .configuring:
                    ProgressView("Opening the shop…")
                case .unavailable(let reason):
                    ContentUnavailableView("The shop is unavailable", systemImage: "cart", description: Text(reason))
                case .ready:
                    ShopTabs()
                }
            }
        }
        // What the App Store told the server meanwhile (a renewal, a billing problem) shows on return.
        .onChange(of: scenePhase) { _, phase in
            if phase == .active, model.phase == .ready { Task { await model.refresh() } }
        }
    }
}

/// The shop's three screens, the App Store's sheets, and the last action's message.
struct ShopTabs: View {
    var body: some View {
        TabView {
            NavigationStack { PaywallView() }
                .tabItem { Label("Shop", systemImage: "cart") }
            NavigationStack { ContentDownloadsView() }
                .tabItem { Label("Downloads", systemImage: "arrow.down.circle") }
            NavigationStack { AccountView() }
                .tabItem { Label("Account", systemImage: "person.crop.circle") }
        }
        .modifier(AppStoreSheets())
        .safeAreaInset(edge: .bottom) { NoticeBar() }
    }
}

/// The last action's outcome, until dismissed.
struct NoticeBar: View {
    @Environment(ShopModel.self) private var model

    var body: some View {
        if let notice = model.notice {
            HStack(alignment: .firstTextBaseline) {
                Image(systemName: notice.isError ? "exclamationmark.triangle.fill" : "checkmark.circle.fill")
                    .foregroundStyle(notice.isError ? Color.orange : Color.green)
                Text(notice.message)
                Spacer()
                Button("Dismiss", systemImage: "xmark") { model.dismissNotice() }
                    .labelStyle(.iconOnly)
                    .buttonStyle(.borderless)
            }
            .padding()
            .background(.thinMaterial, in: .rect(cornerRadius: 12))
            .padding()
        }
    }
}

/// The server's API description, served at `/openapi.yaml`.
enum OpenAPIDocument {
    static let yaml = """
        openapi: 3.1.0
        info:
          title: Kakin purchase server
          version: "1"
          description: Verify App Store purchases, record them once, grant once.
        components:
          securitySchemes:
            appKey: {type: apiKey, in: header, name: X-Kakin-Key}
            secretKey: {type: http, scheme: bearer}
          schemas:
            Error:
              type: object
              properties:
                error:
                  type: object
                  required: [code, message, retryable]
                  properties:
                    code: {type: string}
                    message: {type: string}
                    retryable: {type: boolean}
                    appleStatus: {type: integer}
            CustomerResponse:
              type: object
              description: Signed with the server key; the signature is in the X-Kakin-Signature header.
              properties:
                nonce: {type: string}
                signedDate: {type: integer, description: epoch milliseconds}
                customer:
                  type: object
                  properties:
                    bundleID: {type: string}
                    appUserID: {type: string}
                    entitlements: {type: array, items: {type: object}}
                    balances: {type: object, additionalProperties: {type: integer}}
                    transactions: {type: array, items: {type: object}}
                    ledger: {type: array, items: {type: object}}
        paths:
          /v1/transactions:
            post:
              summary: Verify and record a signed transaction (StoreKit 2 JWS or the sandbox's) for a customer.
              security: [{appKey: []}]
              parameters: [{name: nonce, in: query, schema: {type: string}}]
              requestBody:
                content:
                  application/json:
                    schema:
                      type: object
                      required: [bundleId, appUserId, signedTransaction]
                      properties:
                        bundleId: {type: string}
                        appUserId: {type: string}
                        signedTransaction: {type: string}
              responses:
                "200": {description: The customer after recording., content: {application/json: {schema: {$ref: "#/components/schemas/CustomerResponse"}}}}
                "401": {description: Wrong or missing key., content: {application/json: {schema: {$ref: "#/components/schemas/Error"}}}}
                "409": {description: The transaction belongs to another customer.}
                "422": {description: The JWS failed verification.}
          /v1/receipts:
            post:
              summary: Verify a base64 app receipt with verifyReceipt (production first, sandbox on 21007) and record its purchases.
              security: [{appKey: []}]
              requestBody:
                content:
                  application/json:
                    schema:
                      type: object
                      required: [bundleId, appUserId, receipt]
                      properties:
                        bundleId: {type: string}
                        appUserId: {type: string}
                        receipt: {type: string}
                        transactionId: {type: string}
              responses:
                "200": {description: The customer after recording.}
                "422": {description: Apple refused the receipt; error.appleStatus holds its status code.}
                "503": {description: Apple could not be reached or asked to retry; retry later.}
          /v1/notifications/apple:
            post:
              summary: App Store Server Notifications V2; answers 200 only after the notification is durably recorded.
              requestBody:
                content:
                  application/json:
                    schema: {type: object, required: [signedPayload], properties: {signedPayload: {type: string}}}
              responses:
                "200": {description: Processed, or a duplicate of one already processed.}
                "422": {description: The notification failed verification.}
          /v1/customers/{appUserId}:
            get:
              summary: Entitlements, balances and history, signed over the client's nonce.
              security: [{appKey: []}]
              parameters:
                - {name: appUserId, in: path, required: true, schema: {type: string}}
                - {name: bundleId, in: query, required: true, schema: {type: string}}
                - {name: nonce, in: query, schema: {type: string}}
              responses:
                "200": {description: The customer., content: {application/json: {schema: {$ref: "#/components/schemas/CustomerResponse"}}}}
          /v1/customers/{appUserId}/balances/{currency}/spend:
            post:
              summary: Spend currency atomically, once per idempotency key, never below zero.
              security: [{secretKey: []}]
              parameters:
                - {name: appUserId, in: path, required: true, schema: {type: string}}
                - {name: currency, in: path, required: true, schema: {type: string}}
              requestBody:
                content:
                  application/json:
                    schema:
                      type: object
                      required: [bundleId, amount, idempotencyKey]
                      properties: {bundleId: {type: string}, amount: {type: integer, minimum: 1}, idempotencyKey: {type: string}}
              responses:
                "200": {description: "status: spent or alreadySpent, and the balance."}
                "422": {description: Insufficient balance; nothing spent.}
          /v1/content/{productId}:
            put:
              summary: Upload a hosted content package (admin).
              security: [{secretKey: []}]
              parameters:
                - {name: productId, in: path, required: true, schema: {type: string}}
                - {name: bundleId, in: query, required: true, schema: {type: string}}
                - {name: version, in: query, required: true, schema: {type: string}}
              requestBody: {content: {application/octet-stream: {schema: {type: string, format: binary}}}}
              responses:
                "201": {description: Stored, with its SHA-256.}
            get:
              summary: Download a package the customer is entitled to; Range, If-Range and ETag supported.
              security: [{appKey: []}]
              parameters:
                - {name: productId, in: path, required: true, schema: {type: string}}
                - {name: bundleId, in: query, required: true, schema: {type: string}}
                - {name: appUserId, in: query, required: true, schema: {type: string}}
              responses:
                "200": {description: The whole package.}
                "206": {description: The requested range.}
                "403": {description: Not entitled.}
          /v1/catalog:
            get:
              summary: The product list with what each product grants, localized for a locale.
              security: [{appKey: []}]
              parameters:
                - {name: bundleId, in: query, required: true, schema: {type: string}}
                - {name: locale, in: query, schema: {type: string, example: ja_JP}}
              responses:
                "200": {description: "bundleId, locale and products [{productId, type, displayName, description, displayPrice, grants}]"}
          /v1/admin/reconcile:
            post:
              summary: Reconcile with the App Store Server API now.
              security: [{secretKey: []}]
              parameters: [{name: bundleId, in: query, required: true, schema: {type: string}}]
              responses:
                "200": {description: "customersExamined, transactionsSeen, transactionsRecorded, transactionsRevoked"}
          /v1/server-key:
            get: {summary: The server's public key (PEM) that signs customer responses., responses: {"200": {description: PEM}}}
          /health:
            get: {summary: Liveness., responses: {"200": {description: ok}}}
          /metrics:
            get: {summary: Prometheus metrics., responses: {"200": {description: text}}}
        """
}

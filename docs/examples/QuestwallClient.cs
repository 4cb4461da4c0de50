// Send a signed batch to Questwall from Unity (C#). Keep the client secret on your game
// server when you can: anything shipped inside a game build can be extracted.
using System;
using System.Collections;
using System.Security.Cryptography;
using System.Text;
using UnityEngine;
using UnityEngine.Networking;

public class QuestwallClient : MonoBehaviour
{
    public string baseUrl = "http://localhost:8000";
    public string gameId;
    public string clientId;
    public string clientSecret;

    public IEnumerator Send(string jsonBody, Action<long, string> done)
    {
        byte[] body = Encoding.UTF8.GetBytes(jsonBody); // sign exactly the bytes you send
        string timestamp = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds().ToString();
        string signature;
        using (var hmac = new HMACSHA256(Encoding.UTF8.GetBytes(clientSecret)))
        {
            byte[] prefix = Encoding.UTF8.GetBytes(clientId + timestamp);
            byte[] message = new byte[prefix.Length + body.Length];
            Buffer.BlockCopy(prefix, 0, message, 0, prefix.Length);
            Buffer.BlockCopy(body, 0, message, prefix.Length, body.Length);
            signature = BitConverter.ToString(hmac.ComputeHash(message)).Replace("-", "").ToLowerInvariant();
        }

        using (var request = new UnityWebRequest(baseUrl + "/v2/custom-events", "POST"))
        {
            request.uploadHandler = new UploadHandlerRaw(body);
            request.downloadHandler = new DownloadHandlerBuffer();
            request.SetRequestHeader("Content-Type", "application/json");
            request.SetRequestHeader("x-client-id", clientId);
            request.SetRequestHeader("x-timestamp", timestamp);
            request.SetRequestHeader("x-signature", signature);
            yield return request.SendWebRequest();
            done(request.responseCode, request.downloadHandler.text);
        }
    }

    // Example: report a finished match for one player.
    public void ReportMatchEnd(string userId, int score)
    {
        string time = DateTime.UtcNow.ToString("yyyy-MM-dd'T'HH:mm:ss.fff'Z'");
        string json = "{\"gameId\":\"" + gameId + "\",\"identifiers\":[],\"events\":[{\"userId\":\""
            + userId + "\",\"event\":\"MATCH_END\",\"time\":\"" + time
            + "\",\"traits\":{\"score\":" + score + "}}]}";
        StartCoroutine(Send(json, (status, answer) => Debug.Log($"Questwall {status}: {answer}")));
    }
}

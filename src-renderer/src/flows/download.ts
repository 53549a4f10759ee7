/** Offers text as a file download, named as given (the browser asks where, or uses Downloads). */
export function downloadText(fileName: string, text: string, type = 'application/json') {
  saveBlob(fileName, new Blob([text], { type }))
}

function saveBlob(fileName: string, blob: Blob) {
  const url = URL.createObjectURL(blob)
  const link = document.createElement('a')
  link.href = url
  link.download = fileName
  link.rel = 'noopener'
  document.body.append(link)
  link.click()
  link.remove()
  // The click has handed the blob to the download by now; the URL is not needed after it.
  setTimeout(() => {
    URL.revokeObjectURL(url)
  }, 0)
}

/** Offers bytes (base64, as IPC carries them exactly) as a file download, named as given. */
export function downloadBytes(fileName: string, base64: string, type: string) {
  const binary = atob(base64)
  const bytes = new Uint8Array(binary.length)
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i)
  saveBlob(fileName, new Blob([bytes], { type }))
}

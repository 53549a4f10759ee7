/** Offers text as a file download, named as given (the browser asks where, or uses Downloads). */
export function downloadText(fileName: string, text: string, type = 'application/json') {
  const url = URL.createObjectURL(new Blob([text], { type }))
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

export { AssetsPage } from './AssetsPage'
export { bytesWords, etaWords, rateWords } from './words'
